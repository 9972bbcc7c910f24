package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestExitOracle checks the CLI's promise for every command that can move
// money, not case by case: whatever the service does with the request
// (applies it or not; answers, refuses, loses the answer, cuts it, fails
// with a 5xx, hangs) and whatever happens on this side (a --json field
// the resource lacks, a --jq program that fails at run time, stdout full,
// closed or a broken pipe, Ctrl-C before anything runs, at the question,
// while the request is out, or while the output is written), the exit
// code and stderr are true
// of what the service holds:
//
//   - 0 only if it holds the move as asked and stdout shows it;
//   - 1 only if it holds nothing of it (refused, or never reached);
//   - 2 and 130 only if nothing reached it;
//   - 7 only if it holds the move, with "done:" and the id on stderr;
//   - 3 otherwise, with the command that settles it on stderr.
//
// and, so that a CLI saying 3 to everything fails too: an answered move
// with its output written exits 0, with its output failing 7; a refusal
// 1; a bad --json field 2 (or 130 when interrupted before).
//
// The service is a real sandbox behind a scripted loopback server that
// decides the fate of the first write of each run; read-backs and later
// writes reach the sandbox as they are. Every combination runs.
func TestExitOracle(t *testing.T) {
	// The SDK's retry waits, shortened: the same retries, sooner.
	testClientOptions = []paykit.Option{paykit.WithRetryWait(time.Millisecond, 2*time.Millisecond)}
	t.Cleanup(func() { testClientOptions = nil })
	covered := map[string]bool{}
	runs := 0
	for _, oc := range oracleCommands {
		covered[oc.path] = true
		t.Run(strings.ReplaceAll(oc.name, " ", "_"), func(t *testing.T) {
			runs += runOracleCommand(t, oc)
		})
	}
	t.Logf("%d combinations (%d commands x %d service scripts x %d local sides x %d interrupt points)",
		runs, len(oracleCommands), len(oracleModes), len(oracleLocals), len(oracleInterrupts))

	// The commands the tree marks as moving money are exactly those
	// covered: a new one fails here until it is added above.
	for _, path := range moneyCommands(t) {
		if !covered[path] {
			t.Errorf("%s can move money (annotation %s) and the oracle does not run it", path, annMoney)
		}
		delete(covered, path)
	}
	for path := range covered {
		t.Errorf("the oracle runs %s, which the command tree does not mark as moving money", path)
	}
}

// moneyCommands are the command paths marked with annMoney. A command
// that asks for confirmation (--yes) must carry the mark: it is how a new
// money command is found.
func moneyCommands(t *testing.T) []string {
	a := &app{env: &env{getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false }}}
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		_, marked := c.Annotations[annMoney]
		// A sandbox-only command (trigger) moves nothing real: it is
		// held to refusing live profiles (TestSandboxOnlyRefusesLive)
		// instead of this oracle, and must not ask for confirmation.
		if _, sbx := c.Annotations[annSandboxOnly]; sbx && (marked || c.LocalFlags().Lookup("yes") != nil) {
			t.Errorf("%s is sandbox-only and marked %s or asks --yes: it is one or the other", c.CommandPath(), annMoney)
		}
		if c.LocalFlags().Lookup("yes") != nil && !marked {
			t.Errorf("%s asks for confirmation (--yes) but is not marked %s", c.CommandPath(), annMoney)
		}
		if marked {
			out = append(out, c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(a))
	slices.Sort(out)
	return out
}

// oracleCommand is one money command: its arguments for a run (given
// the sandbox's SDK client and a number unique to the run), the write it
// sends, and how to tell whether the service holds its move.
type oracleCommand struct {
	name string
	// path is the command's path in the tree (CommandPath).
	path string
	// method and route identify the write (route without the id).
	method, route string
	// prepare makes what the run needs and returns its arguments and a
	// probe: applied reads whether the move is held, id is what the
	// output and stderr must name ("" for none).
	prepare func(t *testing.T, c *paykit.Client, n int) (args []string, applied func() bool, id string, settle string)
}

// oracleCommands are every money command; TestExitOracle fails when the
// tree has one more.
var oracleCommands = []oracleCommand{
	{name: "payments create", path: "paykit payments create", method: "POST", route: "/v1/payments",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			ext := "o-pay-" + strconv.Itoa(n)
			return []string{"payments", "create", "--ext-id", ext, "--amount", strconv.Itoa(100 + n)},
				func() bool { _, err := c.GetPaymentByExtID(context.Background(), ext); return err == nil },
				ext, "paykit payments get --ext-id " + ext
		}},
	{name: "payments confirm", path: "paykit payments confirm", method: "POST", route: "/confirm",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			id := oraclePayment(t, c, n, 0)
			return []string{"payments", "confirm", id}, paymentIn(c, id, paykit.PaymentStatusProcessing), id, "paykit payments get " + id
		}},
	{name: "payments cancel", path: "paykit payments cancel", method: "POST", route: "/cancel",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			id := oraclePayment(t, c, n, 0)
			return []string{"payments", "cancel", id}, paymentIn(c, id, paykit.PaymentStatusCancelled), id, "paykit payments get " + id
		}},
	{name: "disputes open", path: "paykit disputes open", method: "POST", route: "/dispute",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			id := oraclePayment(t, c, n, 1)
			return []string{"disputes", "open", id, "--comment", "paid late"}, paymentIn(c, id, paykit.PaymentStatusDispute), id, "paykit payments get " + id
		}},
	{name: "disputes cancel", path: "paykit disputes cancel", method: "POST", route: "/dispute/cancel",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			id := oraclePayment(t, c, n, 2)
			return []string{"disputes", "cancel", id}, paymentIn(c, id, paykit.PaymentStatusCancelledAppeal), id, "paykit payments get " + id
		}},
	{name: "payouts create", path: "paykit payouts create", method: "POST", route: "/v1/payouts",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			ext := "o-out-" + strconv.Itoa(n)
			return []string{"payouts", "create", "--ext-id", ext, "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "I P", "--yes"},
				payoutExists(c, ext), ext, "paykit payouts get --ext-id " + ext
		}},
	{name: "transfers create", path: "paykit transfers create", method: "POST", route: "/v1/transfers",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			return []string{"transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID, "--amount", "0.01", "--yes"},
				balanceMoved(t, c), "", "paykit terminals"
		}},
	{name: "withdrawals create", path: "paykit withdrawals create", method: "POST", route: "/v1/withdrawals",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			return []string{"withdrawals", "create", "--terminal", sandbox.DefaultMainTerminalID, "--amount", "1", "--address", "TXYZabcdefghijklmnopqrstuvwxyz1234", "--yes"},
				balanceMoved(t, c), "", "paykit terminals"
		}},
	{name: "api POST payouts", path: "paykit api", method: "POST", route: "/v1/payouts",
		prepare: func(t *testing.T, c *paykit.Client, n int) ([]string, func() bool, string, string) {
			ext := "o-api-" + strconv.Itoa(n)
			return []string{"api", "POST", "/v1/payouts", "-f", "ext_id=" + ext, "-F", "amount=10", "-f", "method=card", "-f", "requisites=" + testCard, "-f", "holder_name=I P", "--yes"},
				payoutExists(c, ext), ext, "paykit payouts get --ext-id " + ext
		}},
}

// oraclePayment makes a payment for a run: PENDING (stage 0), CANCELLED
// (1) or in dispute (2).
func oraclePayment(t *testing.T, c *paykit.Client, n, stage int) string {
	ctx := context.Background()
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "o-prep-" + strconv.Itoa(n), Amount: decimal.NewFromInt(int64(100 + n))})
	if err == nil && stage >= 1 {
		_, err = c.CancelPayment(ctx, p.ID)
	}
	if err == nil && stage >= 2 {
		_, err = c.OpenDispute(ctx, p.ID, paykit.OpenDisputeParams{Comment: "x"})
	}
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

func paymentIn(c *paykit.Client, id string, s paykit.PaymentStatus) func() bool {
	return func() bool {
		p, err := c.GetPayment(context.Background(), id)
		return err == nil && strings.EqualFold(string(p.Status), string(s))
	}
}

func payoutExists(c *paykit.Client, ext string) func() bool {
	return func() bool { _, err := c.GetPayoutByExtID(context.Background(), ext); return err == nil }
}

// balanceMoved tells whether the main terminal's balance or frozen
// balance changed since it was called.
func balanceMoved(t *testing.T, c *paykit.Client) func() bool {
	read := func() string {
		ts, err := c.ListTerminals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			if x.ID == sandbox.DefaultMainTerminalID {
				return x.Balance.String() + "/" + x.BalanceFrozen.String()
			}
		}
		t.Fatal("no main terminal")
		return ""
	}
	before := read()
	return func() bool { return read() != before }
}

// What the scripted server does with a run's first write.
type oracleMode struct {
	name    string
	applied bool // the sandbox applies it
	// answer: "full", "refuse" (a 400, nothing applied), "drop" (the
	// connection closes, no answer), "cut" (half the body), "5xx", "hang"
	// (no answer until the client gives up).
	answer string
}

var oracleModes = []oracleMode{
	{"answered", true, "full"},
	{"refused", false, "refuse"},
	{"lost-applied", true, "drop"},
	{"lost-unapplied", false, "drop"},
	{"cut-applied", true, "cut"},
	{"5xx-applied", true, "5xx"},
	{"5xx-unapplied", false, "5xx"},
	{"hang-applied", true, "hang"},
	{"hang-unapplied", false, "hang"},
}

// The local side: extra arguments, and what stdout does.
type oracleLocal struct {
	name   string
	args   []string
	stdout error // every write fails with it; nil for a buffer
}

var oracleLocals = []oracleLocal{
	{"json-out", []string{"-o", "json"}, nil},
	{"bad-json-field", []string{"--json", "no_such_field"}, nil},
	{"jq-fails-at-run-time", []string{"--jq", ".[] | .[]"}, nil},
	{"stdout-full", []string{"-o", "json"}, syscall.ENOSPC},
	{"stdout-closed", []string{"-o", "json"}, syscall.EBADF},
	{"stdout-broken-pipe", []string{"-o", "json"}, syscall.EPIPE},
}

// Where Ctrl-C (the command's context cancelled) comes.
// At the question, the command runs on a terminal without --yes (a
// command that asks nothing then runs as without Ctrl-C).
var oracleInterrupts = []string{"none", "before-start", "at-the-question", "while-the-request-is-out", "at-the-output"}

// refusals are the honest 400 each write's route may answer with.
var refusals = map[string]string{"/v1/payments": "PAY_002", "/confirm": "PAY_008", "/cancel": "PAY_007", "/dispute": "DIS_001",
	"/dispute/cancel": "DIS_003", "/v1/payouts": "PAY_002", "/v1/transfers": "TRF_003", "/v1/withdrawals": "WDR_002"}

// runOracleCommand runs every combination for one command and returns
// their number.
func runOracleCommand(t *testing.T, oc oracleCommand) int {
	e := newEnv(t)
	n := 0
	for _, m := range oracleModes {
		for _, l := range oracleLocals {
			for _, intr := range oracleInterrupts {
				n++
				name := fmt.Sprintf("%s/%s/%s/%s", oc.name, m.name, l.name, intr)
				args, applied, id, settleCmd := oc.prepare(t, e.sdk, n)
				args = append(args, l.args...)
				if m.answer == "hang" {
					// The client gives up on --timeout, not a pause.
					args = append(args, "--timeout", "50ms")
				}
				ctx, cancel := context.WithCancel(context.Background())
				var onWrite func()
				if intr == "while-the-request-is-out" {
					onWrite = cancel
				}
				if intr == "before-start" {
					cancel()
				}
				// A server of its own per run: a request of this run
				// that arrives late is still counted as this run's.
				srv, reached := oc.script(t, e.sb, m, onWrite)
				vars := map[string]string{"PAYKIT_BASE_URL": srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, "PAYKIT_CONFIG": "/nonexistent/x"}
				out := &oracleStdout{fail: l.stdout}
				if intr == "at-the-output" {
					out.first = cancel
				}
				var errb bytes.Buffer
				stderr := io.Writer(&errb)
				var stdin io.Reader = strings.NewReader("")
				terminal := false
				asks := slices.Contains(args, "--yes")
				if intr == "at-the-question" {
					// Nobody answers; Ctrl-C comes once it is asked.
					args = slices.DeleteFunc(args, func(s string) bool { return s == "--yes" })
					pr, pw := io.Pipe()
					defer pw.Close()
					stdin, terminal = pr, true
					stderr = writerFunc(func(b []byte) (int, error) {
						if bytes.Contains(b, []byte("? [y/N] ")) {
							cancel()
						}
						return errb.Write(b)
					})
				}
				code := run(ctx, args, &env{stdin: stdin, stdout: out, stderr: stderr,
					getenv: func(k string) string { return vars[k] }, isTerminal: func(any) bool { return terminal }})
				cancel()
				srv.CloseClientConnections()
				srv.Close()
				judge(t, name, code, errb.String(), out.buf.String(), oracleFacts{
					applied: applied(), reached: reached(), id: id, settle: settleCmd,
					mode: m, local: l, interrupt: intr, asks: asks,
				})
			}
		}
	}
	return n
}

// script is the loopback server of one run: the command's first write
// meets mode m (onWrite, when set, runs as it arrives); every other
// request reaches the sandbox as it is. reached counts the command's
// writes that arrived.
func (oc oracleCommand) script(t *testing.T, sb *sandbox.Server, m oracleMode, onWrite func()) (srv *httptest.Server, reached func() int) {
	var mu sync.Mutex
	writes := 0
	isWrite := func(r *http.Request) bool {
		return r.Method == oc.method && strings.HasSuffix(r.URL.Path, oc.route) &&
			!(oc.route == "/dispute" && strings.HasSuffix(r.URL.Path, "/dispute/cancel"))
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		scripted := isWrite(r) && writes == 0
		if isWrite(r) {
			writes++
		}
		mu.Unlock()
		if !scripted {
			sb.ServeHTTP(w, r)
			return
		}
		if onWrite != nil {
			onWrite()
		}
		rec := httptest.NewRecorder()
		if m.applied {
			sb.ServeHTTP(rec, r)
		} else {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		switch m.answer {
		case "full":
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		case "refuse":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":%q,"message":"refused by the oracle","data":{}}`, refusals[oc.route])
		case "5xx":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":"SYS_001","message":"internal error","data":{}}`)
		case "drop", "cut":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			if m.answer == "cut" {
				b := rec.Body.Bytes()
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(b), b[:len(b)/2])
			}
			conn.Close()
		case "hang":
			<-r.Context().Done()
		}
	}))
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return writes }
}

// oracleFacts are what is true after a run.
type oracleFacts struct {
	applied   bool
	reached   int
	id        string
	settle    string
	mode      oracleMode
	local     oracleLocal
	interrupt string
	// asks: the command asks before sending (it was given --yes).
	asks bool
}

// judge holds a run's exit code and output to the facts.
func judge(t *testing.T, name string, code int, stderr, stdout string, f oracleFacts) {
	t.Helper()
	fail := func(why string) {
		t.Errorf("%s: exit %d %s\n  service holds the move: %t; writes that reached it: %d\n  stdout %q\n  stderr %q",
			name, code, why, f.applied, f.reached, stdout, stderr)
	}
	switch code {
	case exitOK:
		if !f.applied {
			fail("(success) but the service holds nothing")
		}
		if f.local.name == "json-out" && (!json.Valid([]byte(stdout)) || !strings.Contains(stdout, f.id)) {
			fail("(success) but stdout does not show it")
		}
		if f.local.stdout != nil {
			fail("(success) but stdout failed")
		}
	case exitAPI:
		if f.applied {
			fail("(refused) but the service holds the move")
		}
	case exitUsage, exitInterrupted:
		if f.applied || f.reached > 0 {
			fail("(nothing sent) but a request reached the service")
		}
	case exitOutputFailed:
		if !f.applied {
			fail("(done; the output failed) but the service holds nothing")
		}
		// Other lines may come first (the balances a move starts from).
		if !strings.Contains(stderr, "paykit: done: ") || !strings.Contains(stderr, f.id) {
			fail("(done; the output failed) without saying what was done")
		}
	case exitUnknown:
		if !strings.Contains(stderr, "Settle it with:\n  "+f.settle) {
			fail("(unknown) without the settling command " + f.settle)
		}
	default:
		fail("(no code a money move may end with)")
	}
	// What must be said exactly, so that "3 to everything" fails.
	plain := f.interrupt == "none" || f.interrupt == "at-the-output" || f.interrupt == "at-the-question" && !f.asks
	switch {
	case f.local.name == "bad-json-field" && code != exitUsage && !(f.interrupt == "before-start" && code == exitInterrupted):
		fail("for a --json field the resource lacks; want 2")
	case f.local.name == "bad-json-field":
	case (f.interrupt == "before-start" || f.interrupt == "at-the-question" && f.asks) && code != exitInterrupted:
		fail("for Ctrl-C before anything was sent; want 130")
	case !plain:
	case f.mode.answer == "full" && f.local.stdout == nil && f.local.name == "json-out" && code != exitOK:
		fail("for a move answered and shown; want 0")
	case f.mode.answer == "full" && (f.local.stdout != nil || f.local.name == "jq-fails-at-run-time") && code != exitOutputFailed:
		fail("for a move answered whose output failed; want 7")
	case f.mode.answer == "refuse" && code != exitAPI:
		fail("for a refusal; want 1")
	}
}

// oracleStdout is stdout for a run: a buffer, or a writer whose every
// write fails with fail; first, when set, runs at the first write (Ctrl-C
// while the output is written).
type oracleStdout struct {
	buf   bytes.Buffer
	fail  error
	first func()
}

func (o *oracleStdout) Write(b []byte) (int, error) {
	if o.first != nil {
		o.first()
		o.first = nil
	}
	if o.fail != nil {
		return 0, &os.PathError{Op: "write", Path: "/dev/stdout", Err: o.fail}
	}
	return o.buf.Write(b)
}
