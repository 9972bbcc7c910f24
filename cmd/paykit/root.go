package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/paykit-dev/paykit-go/internal/buildversion"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	paykit "github.com/paykit-dev/paykit-go"
)

// Exit codes, documented in the package comment, in --help (exitCodesHelp)
// and in README.md, which TestReadmeReference holds to these constants
// (those of wait.go included).
const (
	exitOK          = 0
	exitAPI         = 1
	exitUsage       = 2
	exitUnknown     = 3
	exitCredentials = 4
	// exitInternal is a bug (EX_SOFTWARE of sysexits.h): a panic caught
	// in run, reported with a trace that holds no values.
	exitInternal = 70
	// exitBrokenPipe is the shell's code for SIGPIPE (128 + 13): a read
	// whose stdout's reader went away ends with the code it had when
	// SIGPIPE killed it, before main caught the signal (see brokenPipe).
	exitBrokenPipe = 141
	// exitInterrupted is the shell's code for a command ended by SIGINT
	// (128 + 2): Ctrl-C, or the SIGTERM of a supervisor.
	exitInterrupted = 130
)

// env is the process seen by the commands: main passes the real one, tests
// run the built binary, so everything here is the real thing in both.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	isTerminal     func(f any) bool
}

func isTerminal(f any) bool {
	if file, ok := f.(*os.File); ok {
		return term.IsTerminal(int(file.Fd()))
	}
	return false
}

// usageError is a mistake in the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// credentialsError is a local refusal of the credentials (missing, or a
// config file others can read): exit 4, like the service's refusal.
type credentialsError struct{ msg string }

func (e *credentialsError) Error() string { return e.msg }

// unknownError wraps ErrUnknownOutcome with the paykit command that settles it.
type unknownError struct {
	err    error
	settle string
	// how, when set, says how to read settle's answer: which values mean
	// the call was made, which not, and what cannot tell (whole lines).
	how string
}

func (e *unknownError) Error() string { return e.err.Error() }
func (e *unknownError) Unwrap() error { return e.err }

// interruptedError is a command stopped by a signal before it sent
// anything; what says so ("nothing was sent").
type interruptedError struct{ what string }

func (e *interruptedError) Error() string { return "interrupted; " + e.what }

// app holds the global flags and builds the client once per command.
type app struct {
	env     *env
	output  string
	profile string
	// profileSet: --profile was given on the command line, which then
	// wins over the PAYKIT_* variables (see loadCredentials).
	profileSet bool
	// cred are the credentials of the last client built: the money-move
	// question names their profile and host.
	cred      *credentials
	verbose   bool
	localTime bool
	yes       bool
	timeout   time.Duration
	out       io.Writer
	// unmask shows card and phone numbers in full.
	unmask bool
	// sensitive are the numbers the command masked, for -o json.
	sensitive []string
	// cap is the transport of the last client built, for -o json.
	cap *capture
	// jsonFields, jq and quiet are --json, --jq and -q; shape is what
	// they parse into (see shape.go).
	jsonFields, jq string
	quiet          bool
	shape          *shape
	// outputSet: -o was given on the command line.
	outputSet bool
}

// version is this binary's version line (after "paykit "): its tag and the
// SDK's version for a release, else the SDK's next version marked as a
// development build, with what the go command recorded (internal/buildversion).
func version() string {
	return strings.TrimPrefix(buildversion.Describe("paykit", buildversion.Module(), paykit.Version), "paykit ")
}

const exitCodesHelp = `
Exit codes:
  0  success
  1  the API refused the call (its error code is printed), or a network failure (a money move's: before sending)
  2  usage: a bad flag, argument or value, or a money move without --yes off a terminal; nothing sent
  3  unknown outcome: the call may or may not have taken effect; the settling command is printed
  4  credentials refused: by the service, or missing, or a config file others can read;
     or the sandbox's control token (PAYKIT_SANDBOX_CONTROL_TOKEN) refused or missing
  5  wait --exit-status: settled unsuccessfully; 6: --timeout ran out first
  7  done; the output failed: a money move was done, then its output failed (id and state on stderr)
  70 internal error: a bug (the trace printed holds no values)
  130 interrupted (Ctrl-C); nothing was sent, or exit 3 if a money move may have been
  141 a read whose stdout's reader went away (paykit ... | head)

Credentials: a profile of <config dir>/paykit/config named by --profile (which then
wins over the environment), else PAYKIT_BASE_URL, PAYKIT_API_KEY, PAYKIT_SECRET over
the profile of PAYKIT_PROFILE or "default" (see "paykit help config").
`

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "paykit",
		Short: "Work with the paykit merchant API from the command line",
		Long: "paykit runs every operation of the paykit merchant API, checks a setup (paykit doctor),\n" +
			"says where it would go (paykit auth status), waits for payments, payouts and withdrawals to\n" +
			"settle, makes raw signed calls (paykit api), and runs and drives a local sandbox.",
		Example: "  export PAYKIT_BASE_URL=https://api.example.com PAYKIT_API_KEY=pk_... PAYKIT_SECRET=sk_...\n" +
			"  paykit payments get --ext-id order-1001\n" +
			"  paykit payouts list --all -o csv > payouts.csv\n" +
			"  paykit wait payout --ext-id payout-77 --exit-status --timeout 30m\n" +
			"  paykit auth status\n" +
			"  paykit --profile sandbox balance",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("paykit {{.Version}}\n")
	root.SetUsageTemplate(root.UsageTemplate() + exitCodesHelp)
	pf := root.PersistentFlags()
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table (for people), json (the API's answer) or csv (RFC 4180, for spreadsheets)")
	pf.StringVar(&a.profile, "profile", "", "profile of the config file; wins over PAYKIT_BASE_URL, PAYKIT_API_KEY and PAYKIT_SECRET (default: $PAYKIT_PROFILE, else \"default\")")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log each HTTP attempt on stderr (no secret is logged)")
	pf.BoolVar(&a.localTime, "local-time", false, "show times in the local time zone instead of UTC (table and csv)")
	pf.BoolVar(&a.unmask, "unmask", false, "show card and phone numbers in full (they are masked by default, -o json included)")
	pf.DurationVar(&a.timeout, "timeout", 0, "give up on the whole command after this long (default: no limit; each HTTP attempt gives up after 30s)")
	pf.StringVar(&a.jsonFields, "json", "", "print these fields of the answer as JSON (of each item of a list), such as --json id,status,amount")
	pf.StringVar(&a.jq, "jq", "", "filter the JSON answer with a jq expression (strings print raw), such as --jq '.payouts[].id'")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "print ids alone, one a line")
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp))
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		switch a.output {
		case "table", "json", "csv":
		default:
			return usagef("-o must be table, json or csv, not %q", a.output)
		}
		if a.timeout < 0 {
			return usagef("--timeout must not be negative")
		}
		a.profileSet = cmd.Flags().Changed("profile")
		a.outputSet = cmd.Flags().Changed("output")
		sh, err := parseShape(cmd.Context(), a.jsonFields, a.jq, a.quiet, a.output, a.outputSet)
		if err != nil {
			return err
		}
		if err := sh.checkFields(cmd.Annotations[annResource]); err != nil {
			return err
		}
		a.shape = sh
		if sh.active() {
			a.output = "json"
		}
		return nil
	}
	root.AddCommand(paymentsCmd(a), disputesCmd(a), payoutsCmd(a), terminalsCmd(a), balanceCmd(a), banksCmd(a),
		transfersCmd(a), withdrawalsCmd(a), doctorCmd(a), waitCmd(a), sandboxCmd(a), configCmd(a), authCmd(a), apiCmd(a))
	root.AddCommand(webhooksCmd(a))
	root.AddCommand(triggerCmd(a))
	root.AddCommand(newCmdListen(a, nil))
	// cobra's own help and completion commands get examples too: every
	// command's --help shows one.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	strictGroups(root)
	registerCompletions(a, root)
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  paykit help payouts list\n  paykit help config"
		case "completion":
			c.Example = "  source <(paykit completion bash)\n  paykit completion zsh > \"${fpath[1]}/_paykit\"\n  paykit completion fish > ~/.config/fish/completions/paykit.fish"
			for _, sh := range c.Commands() {
				sh.Example = completionExamples[sh.Name()]
			}
		}
	}
	return root
}

// completionExamples show where each shell's script goes.
var completionExamples = map[string]string{
	"bash":       "  source <(paykit completion bash)\n  paykit completion bash > /etc/bash_completion.d/paykit",
	"zsh":        "  paykit completion zsh > \"${fpath[1]}/_paykit\"",
	"fish":       "  paykit completion fish > ~/.config/fish/completions/paykit.fish",
	"powershell": "  paykit completion powershell | Out-String | Invoke-Expression",
}

// strictGroups makes every command that only groups others (payouts,
// withdrawals, ...) refuse a word that is none of its commands: cobra's
// default prints the help and exits 0 there, so a cron job running
// "paykit payouts lst" would report success. Without a word it is a usage
// error too (exit 2), listing the commands: "paykit payouts" alone does
// nothing either.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if !c.HasParent() || c.Runnable() || !c.HasSubCommands() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.SuggestionsMinimumDistance = 2 // cobra sets it on the root only
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		if len(args) == 0 {
			return usagef("%q needs a command: %s", cmd.CommandPath(), strings.Join(names, ", "))
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usagef("%s (its commands: %s)", msg, strings.Join(names, ", "))
	}
}

// run is main without the process. It returns the exit code.
func run(ctx context.Context, args []string, e *env) (code int) {
	defer func() {
		// A crash message must not carry a secret: print no panic value
		// (it could hold a request or a config line), only where it was.
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "paykit: internal error (a bug; please report it with this trace):\n%s", debug.Stack())
			code = exitInternal
		}
	}()
	a := &app{env: e, out: e.stdout}
	root := newRoot(a)
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{msg: err.Error()} })
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	// Ctrl-C (or SIGTERM) cancelled the command: 130, as a shell reports
	// it, unless a money move may have happened, which exit 3 says.
	// A refusal the service answered before the signal is reported as
	// one (exit 1): 130 says nothing was sent.
	var uo *unknownError
	var de *doneError
	var refused *paykit.Error
	if ctx.Err() != nil && !errors.As(err, &uo) && !errors.As(err, &de) && !errors.As(err, &refused) {
		msg := "paykit: interrupted"
		var ie *interruptedError
		if errors.As(err, &ie) {
			msg += "; " + ie.what
		}
		if e.isTerminal(e.stderr) {
			msg = "\n" + msg // past the ^C the terminal echoed
		}
		fmt.Fprintln(e.stderr, msg)
		return exitInterrupted
	}
	return report(e.stderr, err)
}

// report prints err for a person, in operator words (see plain), and
// maps it to the exit code.
func report(w io.Writer, err error) int {
	msg := plain(err.Error())
	var ue *usageError
	var ce *credentialsError
	var uo *unknownError
	var xe *exitError
	var he *hintError
	var apiErr *paykit.Error
	var de *doneError
	switch {
	case errors.As(err, &de):
		// First: a usage error or an API error inside it is the
		// output's, after the money moved.
		return reportDone(w, de)
	case brokenPipe(err):
		// A read whose stdout's reader went away (paykit … | head):
		// what a shell shows for SIGPIPE, with nothing to say.
		return exitBrokenPipe
	case errors.As(err, &ue) || isCobraUsage(err):
		fmt.Fprintf(w, "paykit: %s\nRun 'paykit --help' or add --help to the command for usage.\n", msg)
		return exitUsage
	case errors.As(err, &ce):
		fmt.Fprintln(w, "paykit:", msg)
		return exitCredentials
	case errors.As(err, &uo):
		what := "outcome unknown: the request may have been applied"
		if cause := unknownCause(err); cause != nil {
			what += " (" + plain(cause.Error()) + ")"
		}
		fmt.Fprintln(w, "paykit:", what)
		if uo.settle != "" {
			fmt.Fprintf(w, "The outcome is unknown: the call may have taken effect. Settle it with:\n  %s\n", uo.settle)
			fmt.Fprint(w, uo.how)
		}
		return exitUnknown
	case errors.As(err, &xe):
		fmt.Fprintln(w, "paykit:", msg)
		return xe.code
	case errors.Is(err, paykit.ErrUnauthorized):
		fmt.Fprintln(w, "paykit:", msg)
		fmt.Fprintln(w, "Check the API key, the secret and the profile (paykit doctor tells which).")
		return exitCredentials
	case errors.Is(err, paykit.ErrInvalidParameters) && !errors.As(err, &apiErr):
		// The SDK's own checks, before anything was sent: a usage error.
		fmt.Fprintln(w, "paykit:", msg)
		return exitUsage
	case errors.As(err, &apiErr):
		// The SDK's text starts with the code ("PAY_006 (HTTP 404): ...")
		// when there is one; say it only when it does not.
		if apiErr.Code != "" && !strings.Contains(msg, apiErr.Code) {
			msg = apiErr.Code + ": " + msg
		}
		fmt.Fprintf(w, "paykit: %s\n", msg)
		if errors.As(err, &he) {
			fmt.Fprintln(w, he.hint)
		}
		return exitAPI
	default:
		fmt.Fprintln(w, "paykit:", msg)
		return exitAPI
	}
}

// isCobraUsage tells cobra's own argument errors (unknown command, wrong
// number of arguments), which it returns as plain errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "accepts ") ||
		strings.HasPrefix(s, "requires ") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag") || strings.HasPrefix(s, "required flag(s)") ||
		strings.HasPrefix(s, "if any flags in the group") || strings.HasPrefix(s, "at least one of the flags in the group")
}

// client builds the SDK client from the environment or the profile.
func (a *app) client() (*paykit.Client, error) {
	cr, err := a.credentials()
	if err != nil {
		return nil, err
	}
	a.cred = cr
	a.cap = &capture{base: http.DefaultTransport.(*http.Transport).Clone()}
	opts := []paykit.Option{paykit.WithUserAgent("paykit-cli/" + version()), paykit.WithHTTPClient(&http.Client{Transport: a.cap, Timeout: paykit.DefaultAttemptTimeout})}
	opts = append(opts, testClientOptions...)
	if a.verbose {
		opts = append(opts, paykit.WithLogger(slog.New(slog.NewTextHandler(a.env.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	c, err := paykit.NewClient(cr.baseURL, cr.apiKey, paykit.HMACSigner(cr.secret), opts...)
	if err != nil {
		return nil, &credentialsError{msg: fmt.Sprintf("credentials (%s): %s", cr.source(), strings.TrimPrefix(err.Error(), "paykit: "))}
	}
	return c, nil
}

// testClientOptions are added to every client's options: a test's
// shorter retry waits, so that a run of the exit-code oracle takes
// milliseconds. Empty in the binary.
var testClientOptions []paykit.Option

// credentials are the client's: the profile, with --profile winning over
// the environment.
func (a *app) credentials() (*credentials, error) {
	return loadCredentials(a.env.getenv, a.profile, a.profileSet)
}

// ctx bounds one command by --timeout when given. Without it nothing
// hangs all the same: each HTTP attempt has the SDK's DefaultAttemptTimeout
// and retries are bounded by the SDK; only wait polls until the resource
// settles, which is what it is for, and payouts list --all pages until the
// service's total, however long a month of payouts takes.
func (a *app) ctx(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return a.bound(cmd.Context())
}

// runBounded runs a verb's work, or the test's runF in its place, within
// the command's context bounded by --timeout.
func runBounded[O any](a *app, cmd *cobra.Command, opts O, runF, run func(context.Context, O) error) error {
	ctx, cancel := a.ctx(cmd)
	defer cancel()
	return runOr(ctx, opts, runF, run)
}

// runOr is gh's pattern: a test passes runF to see the parsed options
// with nothing run; the command itself passes nil and run does the work.
func runOr[O any](ctx context.Context, opts O, runF, run func(context.Context, O) error) error {
	if runF != nil {
		return runF(ctx, opts)
	}
	return run(ctx, opts)
}

// bound is ctx bounded by --timeout, when given.
func (a *app) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if a.timeout == 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, a.timeout)
}

// moveMoney makes a money move: the client first (so missing credentials
// are said before any question), then the question with the amount to
// type on a live profile, then call, bounded by --timeout as the question
// is not. ctx is the command's, unbounded.
func moveMoney[T any](ctx context.Context, a *app, question string, amount decimal.Decimal, call func(*paykit.Client, context.Context) (T, error)) (T, error) {
	var zero T
	c, err := a.client()
	if err != nil {
		return zero, err
	}
	if err := a.confirm(ctx, question, money(amount)); err != nil {
		return zero, err
	}
	ctx, cancel := a.bound(ctx)
	defer cancel()
	return call(c, ctx)
}

// confirm asks before a money move. Off a terminal it refuses unless --yes
// was given: a script must say so explicitly, as gh does for destructive
// commands. The question goes to stderr (stdout may be a file being
// written with -o json), so both stdin and stderr must be a terminal: a
// question nobody sees would hang a script. It names where the money goes:
// the host of the base URL and where the credentials came from, so that
// production and the sandbox do not read alike. On a profile marked live
// the answer must be typed out, amount (as shown) or the profile's name,
// never a reflexive y. Ctrl-C while it waits for the answer ends the
// command at once (exit 130), nothing sent.
func (a *app) confirm(ctx context.Context, what, amount string) error {
	if a.yes {
		return nil
	}
	if !a.env.isTerminal(a.env.stdin) || !a.env.isTerminal(a.env.stderr) {
		return usagef("%s moves money: pass --yes to confirm when stdin and stderr are not a terminal", what)
	}
	live := a.cred != nil && a.cred.live
	if live {
		if amount != "" {
			fmt.Fprintf(a.env.stderr, "%s on %s?\nThis is a LIVE profile: type the amount (%s) or the profile's name to confirm: ", what, a.target(), amount)
		} else {
			fmt.Fprintf(a.env.stderr, "%s on %s?\nThis is a LIVE profile: type the profile's name to confirm: ", what, a.target())
		}
	} else {
		fmt.Fprintf(a.env.stderr, "%s on %s? [y/N] ", what, a.target())
	}
	answer := make(chan string, 1)
	go func() {
		// The read cannot be cancelled; on Ctrl-C the process exits
		// with this goroutine still blocked in it.
		line, _ := bufio.NewReader(a.env.stdin).ReadString('\n')
		answer <- strings.TrimSpace(line)
	}()
	select {
	case <-ctx.Done():
		return &interruptedError{what: "nothing was sent"}
	case s := <-answer:
		switch {
		case live && (amount != "" && s == amount || s == a.cred.profile):
			return nil
		case !live && (strings.EqualFold(s, "y") || strings.EqualFold(s, "yes")):
			return nil
		}
	}
	return usagef("not confirmed; nothing was sent")
}

// target names where a call goes: the base URL's host and the source of
// the credentials, such as `api.example.com (profile "live")`.
func (a *app) target() string {
	if a.cred == nil {
		return "an unknown service"
	}
	host := a.cred.baseURL
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		host = u.Host
	}
	switch len(a.cred.fromEnv) {
	case 3:
		return host + " (credentials from the environment)"
	case 0:
		return fmt.Sprintf("%s (profile %q)", host, a.cred.profile)
	}
	return fmt.Sprintf("%s (profile %q with %s from the environment)", host, a.cred.profile, strings.Join(a.cred.fromEnv, ", "))
}
