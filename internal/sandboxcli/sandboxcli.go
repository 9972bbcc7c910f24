// Package sandboxcli is the command line of the sandbox: the flags, the
// banner, the warnings and the graceful shutdown that cmd/paykit-sandbox
// and the paykit tool's "paykit sandbox" share, so the two take exactly the
// same flags. It is internal: merchants run one of the two binaries.
package sandboxcli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/paykit-dev/paykit-go/internal/buildversion"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	_ "github.com/paykit-dev/paykit-go/sandbox/sqlite" // -db: the SQLite store
)

const routesHelp = `
API routes (signed: X-Identity and X-Signature on every request; see the SDK's HMACSigner):
  POST /v1/payments                          create a payment (JSON)
  GET  /v1/payments/{id}                     get a payment
  GET  /v1/payments/by-ext-id/{extId}        get a payment by ext_id
  POST /v1/payments/{id}/confirm             confirm (multipart/form-data, optional "attachment" image <= 10,000,000 bytes)
  POST /v1/payments/{id}/cancel              cancel a PENDING payment
  POST /v1/payments/{id}/dispute             open a dispute (JSON)
  POST /v1/payments/{id}/dispute/cancel      cancel a dispute
  POST /v1/payouts                           create a payout (JSON)
  GET  /v1/payouts                           list payouts (?status=&from=&to=&limit=&offset=)
  GET  /v1/payouts/{id}                      get a payout
  GET  /v1/payouts/by-ext-id/{extId}         get a payout by ext_id
  GET  /v1/terminals                         list terminals
  GET  /v1/balance                           total balance
  GET  /v1/banks                             list banks
  POST /v1/transfers                         move USDT between terminals (JSON)
  POST /v1/withdrawals                       withdraw USDT (JSON)
  GET  /v1/withdrawals/fee                   current withdrawal fee
  GET  /v1/withdrawals/{id}                  get a withdrawal
The whole contract: openapi.yaml at the repository root.

Controls (unsigned JSON POSTs, loopback Host only unless -allow-remote, and
Content-Type: application/json required; each answers the changed resource or {}):
  /sandbox/payments/{id}/verify          {"outcome":"completed"} or {"outcome":"cancelled"}   payment in PROCESSING
  /sandbox/payments/{id}/dispute/review  {"outcome":"approved"} or {"outcome":"rejected"}     payment in DISPUTE
  /sandbox/payouts/{id}/status           {"status":"processing"}  (or completed, failed, cancelled)
  /sandbox/withdrawals/{id}/status       {"status":"completed","tx_hash":"..."}  (or processing, failed)
  /sandbox/clock/advance                 {"seconds":3600}   expires PENDING payments past valid_until
  /sandbox/faults                        {"method":"POST","path":"/v1/transfers","mode":"drop_after","count":1}
                                         modes: error_before (status, code), drop_after, delay (delay_ms),
                                         retry_after (retry_after_s); path may use {id} segments
  /sandbox/webhooks/flush                {}   wait until every queued webhook has ended
  /sandbox/webhooks/{id}/resend          {}   send a logged webhook delivery again (id from GET /sandbox/webhooks)
  /sandbox/reset                         {}   back to the starting state
A wrong transition answers 409, an unknown id 404, a foreign Host 403, a
missing JSON Content-Type 415. For example:
  curl -X POST http://127.0.0.1:8080/sandbox/payments/$ID/verify -H 'Content-Type: application/json' -d '{"outcome":"completed"}'
  curl -X POST http://127.0.0.1:8080/sandbox/clock/advance -H 'Content-Type: application/json' -d '{"seconds":1200}'
  curl -X POST http://127.0.0.1:8080/sandbox/reset -H 'Content-Type: application/json' -d '{}'

Inspection (JSON GETs, loopback Host only unless -allow-remote):
  GET /sandbox/requests   the latest requests: method, route, status, error code, duration (no headers or bodies)
  GET /sandbox/webhooks   the latest webhook deliveries with every attempt and the receiver's answer
  GET /sandbox/state      terminals with balances; payments, payouts and withdrawals counted by status
  curl http://127.0.0.1:8080/sandbox/webhooks -H 'Content-Type: application/json'

Listen (signed as the API: X-Identity and X-Signature over GET and the request URI; no control token):
  GET /sandbox/listen[?token=T][&events=payment,payout,withdrawal]
                          Server-Sent Events: every notification of the merchant's resources, with the
                          headers and body a notify_url gets; resume with Last-Event-ID (or ?after=N)
Follow the request log (as the inspection views): GET /sandbox/requests?follow=1 (Server-Sent Events)

Health (no credentials, any Host): GET /healthz (up), GET /readyz (ready to serve); the
healthcheck subcommand exits 0 only when /readyz answers 200 (a scratch image has no curl).

The hosted payment page is GET /pay/{id}; its I-paid button confirms the payment.
In a browser, /sandbox/ui is a dashboard of all of the above (loopback Host only).
Logs: one line per request and per webhook attempt on stderr (-log-format text|json).
`

// Timeouts of the http.Server: a sandbox is often left running, so slow or
// stalled clients must not pin its connections. Reading a 10 MB receipt
// over loopback takes milliseconds; a minute leaves room for slow links.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute
	writeTimeout      = 2 * time.Minute // longer than any delay fault a test should inject
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	bodyTimeout       = 30 * time.Second
)

// decimalFlag is a USDT figure given on the command line.
type decimalFlag struct{ d decimal.Decimal }

func (f *decimalFlag) String() string {
	if f == nil {
		return ""
	}
	return f.d.StringFixed(max(2, -f.d.Exponent()))
}

func (f *decimalFlag) Set(s string) error {
	d, err := decimal.NewFromString(s)
	// A plain decimal only: an exponent form ("1e9") would print as a
	// wall of zeros in the banner.
	if err != nil || d.IsNegative() || !d.Equal(d.Truncate(6)) || len(s) > 40 || strings.ContainsAny(s, "eE") {
		return errors.New("want a non-negative USDT amount with at most 6 decimal places")
	}
	f.d = d
	return nil
}

// Options tell the two commands apart.
type Options struct {
	// Name is the command as the user types it, for -help.
	Name string
	// HideCredentials leaves the API key and secret out of the banner (the
	// paykit tool names its "sandbox" profile instead), with Hint in their
	// place.
	HideCredentials bool
	// Hint is a line the banner prints instead of the credentials.
	Hint string
}

// UsageError is a refusal of the configuration itself (a bad flag, a bad
// PAYKIT_SANDBOX_ variable, a -config file refused), as opposed to a
// failure while serving; the binaries exit 2 on it.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usage(format string, a ...any) error { return &UsageError{msg: fmt.Sprintf(format, a...)} }

// Run serves until ctx ends, then shuts down gracefully. The banner goes
// to stdout; logs and warnings go to stderr. "healthcheck" as the first
// argument runs the health check instead (healthcheck.go). Every flag also
// reads PAYKIT_SANDBOX_<NAME> from the environment, and -config FILE
// describes the rest (config_file.go).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, o Options) error {
	return runWith(ctx, args, osEnv{}, stdout, stderr, o)
}

// environment is the process environment as Run reads it; tests give
// their own instead of touching the process's.
type environment interface {
	Getenv(name string) string
	Environ() []string
}

type osEnv struct{}

func (osEnv) Getenv(name string) string { return os.Getenv(name) }
func (osEnv) Environ() []string         { return os.Environ() }

// flags are the command line's values, before the environment and the
// configuration file are merged in.
type flags struct {
	fs                                                          *flag.FlagSet
	addr, apiKey, secret, controlToken, logFormat, configPath   *string
	hookFaults                                                  *string
	db                                                          *string
	ttl, retryWait                                              *time.Duration
	samePending, attempts, hookTotal, hookPer                   *int
	fee, balance                                                *decimalFlag
	allowRemote, unsigned, printConfig, autopilot, ignoreTV     *bool
	version                                                     *bool
	payerDelay, verifyDelay, reviewDelay, payoutDelay, wdrDelay *time.Duration
}

func newFlags(name string, out io.Writer) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	f := &flags{fs: fs}
	f.addr = fs.String("addr", "127.0.0.1:8080", "listen address (loopback by default: the controls are unauthenticated)")
	f.apiKey = fs.String("api-key", sandbox.DefaultAPIKey, "API key of the merchant (X-Identity)")
	f.secret = fs.String("secret", sandbox.DefaultSecret, "signing secret of the merchant (HMACSigner)")
	f.ttl = fs.Duration("payment-validity", sandbox.DefaultPaymentTTL, "span from created_at to valid_until of a payment")
	f.samePending = fs.Int("max-same-amount", sandbox.DefaultMaxSamePendingAmount,
		"PENDING payments that may share an amount before the next create answers PAY_005")
	f.fee = &decimalFlag{d: decimal.RequireFromString("1.50")}
	fs.Var(f.fee, "withdrawal-fee", "withdrawal fee of each terminal, USDT")
	f.balance = &decimalFlag{d: decimal.RequireFromString("1000.00")}
	fs.Var(f.balance, "start-balance", "starting balance of "+sandbox.DefaultMainTerminalID+", USDT")
	f.attempts = fs.Int("webhook-attempts", sandbox.DefaultWebhookMaxAttempts, "attempts per webhook delivery before giving up")
	f.retryWait = fs.Duration("webhook-retry-wait", sandbox.DefaultWebhookRetryWait, "wait after the first failed webhook attempt, doubled after each")
	f.allowRemote = fs.Bool("allow-remote", false,
		"let the /sandbox/ controls and inspection answer a non-loopback Host (only on a trusted network)")
	f.controlToken = fs.String("control-token", "",
		"token required on /sandbox/ controls, inspection and dashboard (Authorization: Bearer, or the dashboard's login); "+
			"required with -allow-remote; at least 128 bits of entropy (openssl rand -hex 32); "+
			"prefer $PAYKIT_SANDBOX_CONTROL_TOKEN, which keeps it out of the process list")
	f.unsigned = fs.Bool("accept-unsigned", false,
		"accept the merchant's requests without a valid X-Signature (for a validation proxy that re-serialises bodies); loud in the log and the dashboard")
	f.hookTotal = fs.Int("webhook-concurrency", sandbox.DefaultWebhookConcurrency, "webhook attempts in flight at once")
	f.hookPer = fs.Int("webhook-per-receiver", sandbox.DefaultWebhookPerReceiver, "webhook attempts in flight to one receiver (host:port)")
	f.hookFaults = fs.String("webhook-faults", "",
		"make webhook deliveries misbehave on purpose: duplicate=0.1,reorder=0.1,delay=2s,seed=42 (rates in [0,1]: sent twice, "+
			"held back behind the resource's next notification; each delivery late by up to delay; the seed replays a run, "+
			"one is picked and printed when none is given)")
	f.logFormat = fs.String("log-format", "text", "log format on stderr: text or json")
	f.db = fs.String("db", "", "SQLite file that keeps every merchant's state across restarts (created when missing; "+
		"a file that is corrupt, from a newer sandbox or held by another process is refused, never reset); empty: in memory")
	f.configPath = fs.String("config", "", "JSON configuration file: merchants, terminals, banks, rates, webhooks, autopilot (README, \"Run a shared staging sandbox\")")
	f.printConfig = fs.Bool("print-config", false, "print the effective configuration as JSON, secrets masked, and exit")
	f.version = fs.Bool("version", false, "print the version of this binary and of the SDK it serves, and exit (command line only)")
	f.autopilot = fs.Bool("autopilot", false, "move payments, disputes, payouts and withdrawals along by themselves; test values choose outcomes")
	f.payerDelay = fs.Duration("autopilot-payer-delay", sandbox.DefaultPayerDelay, "autopilot: wait before a payer presses I paid (amount kopecks .11)")
	f.verifyDelay = fs.Duration("autopilot-verify-delay", sandbox.DefaultVerifyDelay, "autopilot: wait before a confirmed payment is verified")
	f.reviewDelay = fs.Duration("autopilot-review-delay", sandbox.DefaultReviewDelay, "autopilot: wait before a dispute is reviewed")
	f.payoutDelay = fs.Duration("autopilot-payout-delay", sandbox.DefaultPayoutDelay, "autopilot: each payout step")
	f.wdrDelay = fs.Duration("autopilot-withdrawal-delay", sandbox.DefaultWithdrawalDelay, "autopilot: each withdrawal step")
	f.ignoreTV = fs.Bool("autopilot-ignore-test-values", false, "autopilot: default outcomes for every value, no PAY_004 by amount")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: %s [flags]\n       %s healthcheck [-addr host:port]\n\n", name, name)
		fmt.Fprint(w, "Serves the paykit sandbox API on -addr. Every flag can also be given as an environment variable\n"+
			"PAYKIT_SANDBOX_<NAME> (upper case, dashes as underscores: PAYKIT_SANDBOX_API_KEY); a flag on the\n"+
			"command line wins over the variable, and both win over -config.\n\nFlags:\n")
		fs.PrintDefaults()
		fmt.Fprint(w, routesHelp)
		fmt.Fprint(w, testValuesHelp())
	}
	return f
}

// testValuesHelp renders sandbox.TestValues for -help: the same table the
// README, the package documentation and the dashboard carry.
func testValuesHelp() string {
	var b strings.Builder
	b.WriteString("\nTest values (with -autopilot; also at /sandbox/ui/testvalues):\n")
	for _, v := range sandbox.TestValues {
		fmt.Fprintf(&b, "  %-10s %-10s %s (e.g. %s): %s\n", v.Resource, v.Field, v.Value, v.Example, v.Outcome)
	}
	return b.String()
}

// runWith is Run with the environment given.
func runWith(ctx context.Context, args []string, env environment, stdout, stderr io.Writer, o Options) error {
	if o.Name == "" {
		o.Name = "paykit-sandbox"
	}
	if len(args) > 0 && args[0] == "healthcheck" {
		return healthcheck(ctx, o.Name, args[1:], env, stdout)
	}
	f := newFlags(o.Name, stdout)
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &UsageError{msg: err.Error()}
	}
	if f.fs.NArg() > 0 {
		return usage("unexpected arguments: %v", f.fs.Args())
	}
	if *f.version {
		fmt.Fprintln(stdout, buildversion.Describe(o.Name, buildversion.Module(), paykit.Version))
		return nil
	}
	for _, w := range unknownEnv(f.fs, env) {
		fmt.Fprintln(stderr, w)
	}
	typed := false // -secret on the command line: the user sees it anyway
	f.fs.Visit(func(fl *flag.Flag) { typed = typed || fl.Name == "secret" })
	if err := applyEnv(f.fs, env); err != nil {
		return err
	}
	eff, err := effective(f, env)
	if err != nil {
		return err
	}
	eff.showSecret = eff.fromFlags && (typed || *f.secret == sandbox.DefaultSecret)
	if *f.printConfig {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(eff.file.printable())
	}
	return serve(ctx, eff, stdout, stderr, o)
}

// testDBPath, when set, gives a run without -db a temporary database file
// and the function that removes it. Only this package's tests set it
// (PAYKIT_SANDBOX_TEST_DB=file), so their runs are repeated on SQLite; the
// banner and the printed configuration still say "in memory".
var testDBPath func() (path string, remove func())

func serve(ctx context.Context, eff *config, stdout, stderr io.Writer, o Options) error {
	var handler slog.Handler
	switch eff.file.LogFormat {
	case "text":
		handler = slog.NewTextHandler(stderr, nil)
	default: // "json": effective refused anything else
		handler = slog.NewJSONHandler(stderr, nil)
	}
	ln, err := net.Listen("tcp", eff.file.Addr)
	if err != nil {
		return err
	}
	cfg := eff.sandbox
	cfg.ListenAddrs = []string{ln.Addr().String()}
	cfg.Logger = slog.New(handler)
	cfg.RequestBodyTimeout = bodyTimeout
	open := cfg
	if open.DBPath == "" && testDBPath != nil {
		var remove func()
		open.DBPath, remove = testDBPath()
		defer remove() // after sb.Close, deferred below
	}
	sb, err := sandbox.Open(open)
	if err != nil {
		ln.Close()
		return err
	}
	defer sb.Close()
	srv := newHTTPServer(sb)
	conns := trackConns(srv)

	if w := exposureWarning(ln.Addr(), cfg.AllowRemote, cfg.ControlToken != ""); w != "" {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintf(stdout, "paykit sandbox listening on %s\n", baseURL(ln.Addr()))
	if o.HideCredentials && o.Hint != "" {
		fmt.Fprintln(stdout, "  "+o.Hint)
	}
	for _, m := range cfg.Merchants {
		switch {
		case o.HideCredentials:
		case eff.showSecret:
			// The flags' merchant is a local playground whose secret the
			// user typed (or the documented default); a secret from the
			// environment or a team's file stays out of the output, which
			// a container sends to its logs.
			fmt.Fprintf(stdout, "  api key:   %s\n  secret:    %s\n", m.APIKey, m.Secret)
		case eff.fromFlags:
			fmt.Fprintf(stdout, "  api key:   %s\n  secret:    **** (from %s)\n", m.APIKey, envName("secret"))
		default:
			fmt.Fprintf(stdout, "  api key:   %s (secret from the configuration)\n", maskKey(m.APIKey))
		}
		// The balances the sandbox holds: with -db, a used file's, which
		// win over the configured start (the log says when they differ).
		for _, t := range sb.Terminals(m.APIKey) {
			fmt.Fprintf(stdout, "  terminal:  %s (%s, %s USDT)\n", t.ID, t.Name, t.Balance.StringFixed(max(2, -t.Balance.Exponent())))
		}
	}
	if cfg.DBPath != "" {
		fmt.Fprintf(stdout, "  database:  %s (state kept across restarts)\n", cfg.DBPath)
	} else {
		fmt.Fprintln(stdout, "  database:  none, state in memory (-db FILE keeps it across restarts)")
	}
	if cfg.Autopilot.Enabled {
		fmt.Fprintln(stdout, "  autopilot: on (test values: -help, or /sandbox/ui/testvalues)")
	}
	if f := sb.State().Webhooks.Faults; f != nil {
		// The seed in use, picked when none was given: what replays the run.
		fmt.Fprintf(stdout, "  webhook faults: %s (on purpose; the same seed replays this run)\n", f)
	}
	fmt.Fprintln(stdout, "  controls:  POST /sandbox/... with Content-Type: application/json; inspection: GET /sandbox/state, /sandbox/requests, /sandbox/webhooks (see -help)")
	fmt.Fprintln(stdout, "  health:    GET /healthz, GET /readyz (no credentials)")
	if cfg.ControlToken != "" {
		fmt.Fprintln(stdout, "  control token: set; send it as Authorization: Bearer TOKEN, or log in at /sandbox/login")
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown(srv, conns, shutdownGrace, idleGrace)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Graceful shutdown: a request in progress gets up to shutdownGrace to
// finish and answer (more than the 10 s a container runtime waits after
// SIGTERM by default, so the runtime's own timeout is what cuts a longer
// one). Connections with no request in progress hold the shutdown for at
// most idleGrace: a browser's preconnect to the payment page never sends a
// request, and an interrupt the user asked for should not wait on it.
const (
	shutdownGrace = 25 * time.Second
	idleGrace     = time.Second
)

// shutdown stops srv: net/http's Shutdown alone would either cut requests
// in flight at a short timeout or wait the whole of a long one for
// connections that never send anything. conns must be srv's ConnState
// tracker (trackConns).
func shutdown(srv *http.Server, conns *connTracker, grace, idle time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil { // the grace ran out
				srv.Close()
			}
			return
		case <-tick.C:
			if time.Since(start) >= idle && conns.activeCount() == 0 {
				srv.Close() // Shutdown then returns
			}
		}
	}
}

// connTracker knows the connections of an http.Server that are serving a
// request (http.StateActive).
type connTracker struct {
	mu     sync.Mutex
	active map[net.Conn]bool
}

// trackConns sets srv.ConnState to a new tracker and returns it.
func trackConns(srv *http.Server) *connTracker {
	c := &connTracker{active: map[net.Conn]bool{}}
	srv.ConnState = c.track
	return c
}

func (c *connTracker) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st == http.StateActive {
		c.active[conn] = true
	} else {
		delete(c.active, conn)
	}
}

func (c *connTracker) activeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.active)
}

// newHTTPServer sets every timeout and the header cap: the zero values of
// http.Server mean "forever" and "1 MB", wrong for a server people leave
// running.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}

// exposureWarning is printed when the sandbox listens beyond loopback. The
// Host check on the controls stops browsers (DNS rebinding), not a program
// on the network, which can send any Host header.
func exposureWarning(a net.Addr, allowRemote, token bool) string {
	tcp, ok := a.(*net.TCPAddr)
	if ok && tcp.IP.IsLoopback() {
		return ""
	}
	if token {
		return "NOTE: paykit-sandbox listens on " + a.String() + ", beyond loopback: anyone who can reach it can call the API " +
			"with the printed credentials; the /sandbox/ controls need the control token."
	}
	w := "WARNING: paykit-sandbox listens on " + a.String() + ", beyond loopback: anyone who can reach it can call the API " +
		"with the printed credentials and can drive the unauthenticated /sandbox/ controls (complete payments, move the clock, " +
		"reset all state) by sending a loopback Host header"
	if allowRemote {
		w += " or, with -allow-remote, any Host at all"
	}
	return w + ". Bind to 127.0.0.1 unless this network is trusted."
}

// baseURL is the URL clients use: an unspecified listen address (":8080",
// "0.0.0.0:8080") is reachable on loopback.
func baseURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		port := 0
		if ok {
			port = tcp.Port
		}
		return fmt.Sprintf("http://127.0.0.1:%d", port)
	}
	return "http://" + tcp.String()
}
