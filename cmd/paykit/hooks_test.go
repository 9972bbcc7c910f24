package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/spf13/cobra"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/paykit-dev/paykit-go/webhooktest"
)

// hookReceiver is a local receiver: every POST it gets, answered with
// the status the test sets.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	got    chan received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{status: http.StatusOK, got: make(chan received, 64)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.got <- received{r.Header.Clone(), b}
		h.mu.Lock()
		code := h.status
		h.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) url() string { return h.srv.URL + "/paykit/webhook" }

// next is the next POST, or a failed test after 20 s.
func (h *hookReceiver) next(t *testing.T) received {
	t.Helper()
	select {
	case g := <-h.got:
		return g
	case <-time.After(20 * time.Second):
		t.Fatal("the receiver got nothing within 20s")
	}
	return received{}
}

// none fails if the receiver got anything.
func (h *hookReceiver) none(t *testing.T) {
	t.Helper()
	select {
	case g := <-h.got:
		t.Fatalf("the receiver got a body of %d bytes", len(g.body))
	default:
	}
}

// sameToken compares a header with want without printing either.
func sameToken(t *testing.T, what string, h http.Header, want string) {
	t.Helper()
	if got := h.Values("X-Notification-Token"); want == "" && len(got) != 0 || want != "" && (len(got) != 1 || got[0] != want) {
		t.Errorf("%s: X-Notification-Token is not the one expected (%d values)", what, len(got))
	}
}

var latencyCellRE = regexp.MustCompile(`\b[0-9.]+(ns|µs|ms|s)\b`)

var durationRE = regexp.MustCompile(`\b[0-9]+ms\b`)

func TestWebhooksSend(t *testing.T) {
	e := newEnv(t)
	recv := newReceiver(t)
	ctx := context.Background()
	p, err := e.sdk.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "ws-1", Amount: decimal.RequireFromString("1500.50"), NotificationToken: "tok-ws"})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"webhooks", "send", "--to", recv.url(), "--payment", p.ID, "--token", "tok-ws"}
	r := e.run("", args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	g := recv.next(t)
	cur, err := e.sdk.GetPayment(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := webhooktest.NewRequest(recv.url(), "tok-ws", cur)
	if err != nil {
		t.Fatal(err)
	}
	wantBody, _ := io.ReadAll(want.Body)
	if !bytes.Equal(g.body, wantBody) || g.header.Get("Content-Type") != "application/json" {
		t.Errorf("the receiver got other bytes than webhooktest's (%s), Content-Type %q", bodyDiff(g.body, wantBody), g.header.Get("Content-Type"))
	}
	sameToken(t, "payment", g.header, "tok-ws")
	if strings.Contains(r.stdout+r.stderr, "tok-ws") {
		t.Error("the token is in the output")
	}
	r.stdout = durationRE.ReplaceAllString(r.stdout, "<n>ms")
	e.golden("webhooks_send", r, args)

	// A payout: no token unless given; the token from the environment.
	po, err := e.sdk.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "ws-p", Amount: decimal.RequireFromString("10"), Method: paykit.PayoutMethodCard,
		Requisites: testCard, HolderName: "I P"})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "webhooks", "send", "--to", recv.url(), "--payout", po.ID, "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"answer_status":200`) {
		t.Fatalf("payout: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	sameToken(t, "payout", recv.next(t).header, "")
	vars := map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, notificationTokenEnv: "tok-env"}
	if r := e.runEnv(vars, "", "webhooks", "send", "--to", recv.url(), "--payout", po.ID); r.code != 0 {
		t.Fatalf("token from the environment: exit %d, %q", r.code, r.stderr)
	}
	sameToken(t, "payout, env token", recv.next(t).header, "tok-env")

	// The receiver refuses: exit 1, its answer printed.
	recv.mu.Lock()
	recv.status = http.StatusUnauthorized
	recv.mu.Unlock()
	r = e.run("", "webhooks", "send", "--to", recv.url(), "--payment", p.ID)
	if r.code != 1 || !strings.Contains(r.stdout, "answer:    401") || !strings.Contains(r.stderr, "answered 401 Unauthorized, not 2xx") {
		t.Fatalf("a 401: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	recv.next(t)

	// Bad input: exit 2, nothing read or sent.
	before := e.sb.RequestCount("GET", "/v1/payments/{id}")
	for _, bad := range [][]string{
		{"webhooks", "send", "--to", "ftp://x/y", "--payment", p.ID},
		{"webhooks", "send", "--to", "http://u:secretpw@127.0.0.1:1/?k=secretq", "--payment", p.ID, "--payout", po.ID},
		{"webhooks", "send", "--to", recv.url()},
		{"webhooks", "send", "--payment", p.ID},
	} {
		r := e.run("", bad...)
		if r.code != 2 || strings.Contains(r.stderr, "secretpw") || strings.Contains(r.stderr, "secretq") {
			t.Errorf("%v: exit %d, %q", bad, r.code, r.stderr)
		}
	}
	if n := e.sb.RequestCount("GET", "/v1/payments/{id}"); n != before {
		t.Errorf("bad input read the payment %d times", n-before)
	}
	recv.none(t)

	// A receiver that is not there: exit 1, no answer.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	if r := e.run("", "webhooks", "send", "--to", dead.URL, "--payment", p.ID); r.code != 1 || !strings.Contains(r.stdout, "no answer") {
		t.Fatalf("no receiver: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// process is a paykit command running in the background: its stdout and
// stderr lines as they come.
type process struct {
	cmd       *exec.Cmd
	out, errs chan string
	mu        sync.Mutex
	all       strings.Builder
	done      chan struct{}
}

func (e *testEnv) background(vars map[string]string, args ...string) *process {
	e.t.Helper()
	return e.backgroundOf(binary, vars, args...)
}

// backgroundOf starts the program path in the background.
func (e *testEnv) backgroundOf(path string, vars map[string]string, args ...string) *process {
	e.t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = e.commandEnv(vars)
	p := &process{cmd: cmd, out: make(chan string, 256), errs: make(chan string, 256), done: make(chan struct{})}
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	var wg sync.WaitGroup
	pump := func(r io.Reader, ch chan string) {
		defer wg.Done()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.mu.Lock()
			p.all.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			ch <- sc.Text()
		}
		close(ch)
	}
	wg.Add(2)
	go pump(stdout, p.out)
	go pump(stderr, p.errs)
	go func() { wg.Wait(); close(p.done) }()
	e.t.Cleanup(func() { p.stop(e.t) })
	return p
}

// line waits for a line of ch matching re, for 20 s at most.
func (p *process) line(t *testing.T, ch chan string, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-ch:
			if !ok {
				t.Fatalf("the command ended without a line matching %q:\n%s", re, p.output())
			}
			if rx.MatchString(l) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line matching %q within 20s:\n%s", re, p.output())
		}
	}
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.all.String()
}

// stop interrupts the command (Ctrl-C) and returns its exit code.
func (p *process) stop(t *testing.T) int {
	if p.cmd.ProcessState != nil {
		return p.cmd.ProcessState.ExitCode()
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for range p.out {
		}
	}()
	go func() {
		for range p.errs {
		}
	}()
	<-p.done
	_ = p.cmd.Wait()
	return p.cmd.ProcessState.ExitCode()
}

func (e *testEnv) envVars() map[string]string {
	return map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}
}

var tokenLineRE = `notification token .* is (\S+)$`

// sessionToken reads the token listen prints at start.
func sessionToken(t *testing.T, p *process) string {
	t.Helper()
	l := p.line(t, p.errs, tokenLineRE)
	return regexp.MustCompile(tokenLineRE).FindStringSubmatch(l)[1]
}

func TestListenForwards(t *testing.T) {
	e := newEnv(t)
	recv := newReceiver(t)
	ctx := context.Background()
	l := e.background(e.envVars(), "listen", "--forward-to", recv.url())
	tok := sessionToken(t, l)
	if len(tok) < 16 {
		t.Fatalf("a session token of %d characters", len(tok))
	}
	// A payment without notify_url or token: in the feed with the
	// session's token; confirmed, then completed.
	p, err := e.sdk.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: "l-1", Amount: decimal.RequireFromString("300.00")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sdk.ConfirmPayment(ctx, p.ID, nil); err != nil {
		t.Fatal(err)
	}
	g := recv.next(t)
	cur, _ := e.sdk.GetPayment(ctx, p.ID)
	want, _ := webhooktest.NewRequest(recv.url(), tok, cur)
	wantBody, _ := io.ReadAll(want.Body)
	if !bytes.Equal(g.body, wantBody) || g.header.Get("Content-Type") != "application/json" || g.header.Get("User-Agent") != "paykit-sandbox-webhooks" {
		t.Errorf("forwarded other bytes than the sandbox sends (%s), Content-Type %q, User-Agent %q", bodyDiff(g.body, wantBody), g.header.Get("Content-Type"), g.header.Get("User-Agent"))
	}
	sameToken(t, "forwarded", g.header, tok)
	line := l.line(t, l.out, "payment  "+p.ID)
	if !strings.Contains(line, "PROCESSING  ->  200  ") {
		t.Errorf("the line of the delivery: %q", line)
	}
	// The receiver failing is printed, and listening goes on.
	recv.mu.Lock()
	recv.status = http.StatusInternalServerError
	recv.mu.Unlock()
	if err := e.sb.VerifyPayment(p.ID, "completed"); err != nil {
		t.Fatal(err)
	}
	recv.next(t)
	if line := l.line(t, l.out, "payment  "+p.ID+"  COMPLETED"); !strings.Contains(line, "->  500  ") {
		t.Errorf("a 500: %q", line)
	}
	if code := l.stop(t); code != exitInterrupted {
		t.Errorf("Ctrl-C: exit %d", code)
	}
	if strings.Contains(l.output(), testSecret) {
		t.Error("the secret is in listen's output")
	}

	// --events payout and --print-json with a chosen token: a payment is
	// not printed, a payout is, its requisites masked and the token not shown.
	j := e.background(e.envVars(), "listen", "--print-json", "--events", "payout", "--token", "my-local-token-123")
	if got := sessionToken(t, j); got != "my-local-token-123" {
		t.Error("--token is not the session's token")
	}
	if _, err := e.sdk.ConfirmPayment(ctx, e.pendingPayment("l-2").ID, nil); err != nil {
		t.Fatal(err)
	}
	po, err := e.sdk.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "l-p", Amount: decimal.RequireFromString("10"), Method: paykit.PayoutMethodCard,
		Requisites: testCard, HolderName: "I P"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetPayoutStatus(po.ID, "completed"); err != nil {
		t.Fatal(err)
	}
	pl := j.line(t, j.out, ".")
	var v struct {
		Resource, ID, Status string
		Headers              map[string]string
		Body                 map[string]any
	}
	if err := json.Unmarshal([]byte(pl), &v); err != nil || v.Resource != "payout" || v.ID != po.ID || v.Status != "completed" ||
		v.Headers["X-Notification-Token"] != "****" || v.Body["requisites"] != "************1111" || v.Body["status"] != "completed" {
		t.Errorf("--print-json printed %s (%v)", pl, err)
	}
	j.stop(t)

	// Refusals: bad flags are exit 2 before any request, bad credentials 4.
	for _, bad := range [][]string{{"listen"}, {"listen", "--forward-to", "x", "--print-json"}, {"listen", "--forward-to", "ftp://h/"},
		{"listen", "--print-json", "--events", "refund"}, {"listen", "--print-json", "--token", "two words"}} {
		if r := e.run("", bad...); r.code != 2 {
			t.Errorf("%v: exit %d, %q", bad, r.code, r.stderr)
		}
	}
	wrong := e.envVars()
	wrong["PAYKIT_SECRET"] = "sk_wrong"
	if r := e.runEnv(wrong, "", "listen", "--print-json"); r.code != exitCredentials || strings.Contains(r.stderr, "sk_wrong") {
		t.Errorf("a wrong secret: exit %d, %q", r.code, r.stderr)
	}
}

// finalStatuses reads openapi.yaml's status enums: every status of a
// payment, payout or withdrawal that no move leaves (the spec's tables)
// must be a trigger's end. nonFinal lists those a move leaves; a status
// added to an enum fails TestTriggerEveryFinalState until it is in one
// of the two.
var nonFinal = map[string][]string{"PaymentStatus": {"PENDING", "PROCESSING", "DISPUTE"}, "PayoutStatus": {"pending", "processing"},
	"WithdrawalStatus": {"pending", "processing"}}

func specEnum(t *testing.T, spec []byte, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^    ` + name + `:\n(?:      .*\n)*?      enum: \[([^\]]*)\]`).FindSubmatch(spec)
	if m == nil {
		t.Fatalf("openapi.yaml has no enum %s", name)
	}
	var out []string
	for _, s := range strings.Split(string(m[1]), ",") {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

func TestTriggerEveryFinalState(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("..", "..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{"PaymentStatus": "payment", "PayoutStatus": "payout", "WithdrawalStatus": "withdrawal"}
	ends := map[string]bool{}
	names := map[string]bool{}
	for _, p := range triggerPlans {
		ends[p.kind+" "+p.final] = true
		names[p.name] = true
	}
	for enum, kind := range kinds {
		for _, s := range specEnum(t, spec, enum) {
			if slices.Contains(nonFinal[enum], s) {
				continue
			}
			if !ends[kind+" "+s] {
				t.Errorf("no trigger ends a %s in %s, a final status of openapi.yaml's %s", kind, s, enum)
			}
			if n := kind + "." + strings.ToLower(s); kind != "payment" || s != "CANCELLED_APPEAL" {
				if !names[n] {
					t.Errorf("no trigger %s", n)
				}
			}
		}
	}
	// A dispute ends approved or rejected by the review, or cancelled by
	// the merchant (the spec's DISPUTE row).
	for _, o := range []string{"approved", "rejected", "cancelled"} {
		if !names["dispute."+o] {
			t.Errorf("no trigger dispute.%s", o)
		}
	}

	// Each reaches its state in the sandbox, as its answer and a read say.
	e := newEnv(t)
	recv := newReceiver(t)
	for _, p := range triggerPlans {
		t.Run(p.name, func(t *testing.T) {
			args := []string{"trigger", p.name, "-o", "json"}
			if p.kind != "withdrawal" {
				args = append(args, "--notify-url", recv.url())
			}
			r := e.run("", args...)
			var out triggerOut
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil {
				t.Fatalf("exit %d: %q %q", r.code, r.stdout, r.stderr)
			}
			if out.Trigger != p.name || out.Resource != p.kind || out.Status != p.final || len(out.Steps) != len(p.steps) || out.ID == "" {
				t.Errorf("answer %+v", out)
			}
			var got string
			ctx := context.Background()
			switch p.kind {
			case "payment":
				v, err := e.sdk.GetPayment(ctx, out.ID)
				if err != nil || v.ExtID != out.ExtID {
					t.Fatal(err)
				}
				got = string(v.Status)
			case "payout":
				v, err := e.sdk.GetPayout(ctx, out.ID)
				if err != nil {
					t.Fatal(err)
				}
				got = string(v.Status)
			case "withdrawal":
				v, err := e.sdk.GetWithdrawal(ctx, out.ID)
				if err != nil {
					t.Fatal(err)
				}
				got = string(v.Status)
			}
			if got != p.final {
				t.Errorf("the %s is %s, want %s", p.kind, got, p.final)
			}
		})
	}
}

func TestTriggerSession(t *testing.T) {
	e := newEnv(t)
	e.step("trigger_list", 0, "trigger", "--list")
	r := e.run("", "trigger", "payout.failed")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	e.golden("trigger_payout_failed", r, []string{"trigger", "payout.failed"})
	r = e.run("", "trigger", "payout.cancelled", "--json", "trigger,status,steps")
	var shaped map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &shaped) != nil || len(shaped) != 3 || shaped["status"] != "cancelled" || len(shaped["steps"].([]any)) != 2 {
		t.Errorf("--json trigger,status,steps: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	e.step("trigger_unknown", 2, "trigger", "payout.lost")
	e.step("trigger_token_payout", 2, "trigger", "payout.completed", "--token", "t")
	e.step("trigger_notify_withdrawal", 2, "trigger", "withdrawal.completed", "--notify-url", "http://127.0.0.1:1/h")
	if n := e.sb.RequestCount("POST", "/v1/payouts"); n != 2 {
		t.Errorf("%d payouts created, want 2", n)
	}
}

// TestSandboxOnlyRefusesLive: every command marked sandbox-only (trigger)
// refuses a live profile, exit 2, with no request sent; and one pointed
// at a service without the sandbox's controls creates nothing.
func TestSandboxOnlyRefusesLive(t *testing.T) {
	var hits int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t)
	cfg := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(cfg, []byte("[prod]\nbase_url = "+srv.URL+"\napi_key = "+testKey+"\nsecret = "+testSecret+"\nlive = true\n"+
		"[staging]\nbase_url = "+srv.URL+"\napi_key = "+testKey+"\nsecret = "+testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var marked []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Annotations[annSandboxOnly] != "" {
			if _, money := c.Annotations[annMoney]; money {
				t.Errorf("%s is marked both sandbox-only and money", c.CommandPath())
			}
			marked = append(marked, c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRoot(&app{env: &env{getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false }}}))
	if len(marked) == 0 {
		t.Fatal("no command is marked sandbox-only")
	}
	for _, path := range marked {
		if path != "paykit trigger" {
			t.Fatalf("%s is sandbox-only: add its arguments here", path)
		}
		r := e.runEnv(map[string]string{"PAYKIT_CONFIG": cfg}, "", "--profile", "prod", "trigger", "payment.completed")
		if r.code != 2 || !strings.Contains(r.stderr, `profile "prod" is marked live; nothing was sent`) {
			t.Errorf("live: exit %d, %q", r.code, r.stderr)
		}
		r = e.runEnv(map[string]string{"PAYKIT_CONFIG": cfg}, "", "--profile", "staging", "trigger", "payment.completed")
		if r.code != 2 || !strings.Contains(r.stderr, "no sandbox controls") {
			t.Errorf("not a sandbox: exit %d, %q", r.code, r.stderr)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 1 {
		t.Errorf("%d requests reached the service; want the one read of /sandbox/state (staging), none for the live profile", hits)
	}
}

func TestSandboxLogs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.pendingPayment("lg-1")
	if _, err := e.sdk.GetPayment(ctx, "00000000-0000-0000-0000-000000000000"); err == nil {
		t.Fatal("a missing payment was found")
	}
	r := e.run("", "sandbox", "logs", "--method", "post", "-o", "json")
	var recs []struct {
		Method, Path, Route, Merchant string
		Status                        int
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &recs) != nil || len(recs) != 1 || recs[0].Method != "POST" || recs[0].Path != "/v1/payments" || recs[0].Status != 200 ||
		recs[0].Merchant != "pk_t…" || strings.Contains(r.stdout, testKey) {
		t.Fatalf("--method post: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "sandbox", "logs", "--status", "4xx")
	if r.code != 0 || !strings.Contains(r.stdout, "GET     /v1/payments/00000000-0000-0000-0000-000000000000  404") || strings.Contains(r.stdout, "POST") {
		t.Fatalf("--status 4xx: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "sandbox", "logs", "--path", "/v1/payments/{id}", "-o", "csv")
	if rows := readCSV(t, "--path", r.stdout); r.code != 0 || len(rows) != 1 || rows[0]["status"] != "404" || rows[0]["method"] != "GET" {
		t.Fatalf("--path route: exit %d, %q", r.code, r.stdout)
	}
	args := []string{"sandbox", "logs", "--path", "/v1/payments", "-o", "csv"}
	r = e.run("", args...)
	r.stdout = latencyCellRE.ReplaceAllString(r.stdout, "<latency>")
	e.golden("sandbox_logs", r, args)
	if r := e.run("", "sandbox", "logs", "--status", "abc"); r.code != 2 {
		t.Errorf("--status abc: exit %d", r.code)
	}

	// --follow: what the sandbox keeps first, then each new request as
	// it is answered, filtered; Ctrl-C ends it.
	f := e.background(e.envVars(), "sandbox", "logs", "--follow", "--method", "POST", "-o", "json")
	first := f.line(t, f.out, `"path":"/v1/payments"`)
	e.pendingPayment("lg-2")
	if _, err := e.sdk.CancelPayment(ctx, e.pendingPayment("lg-3").ID); err != nil {
		t.Fatal(err)
	}
	cancel := f.line(t, f.out, `/cancel"`)
	var rec struct {
		Method string `json:"method"`
		Route  string `json:"route"`
		Status int    `json:"status"`
	}
	if json.Unmarshal([]byte(cancel), &rec) != nil || rec.Method != "POST" || rec.Route != "/v1/payments/{id}/cancel" || rec.Status != 200 {
		t.Errorf("followed %q", cancel)
	}
	if code := f.stop(t); code != exitInterrupted {
		t.Errorf("Ctrl-C: exit %d", code)
	}
	if strings.Contains(f.output(), `"method":"GET"`) {
		t.Errorf("--method POST printed a GET:\n%s", f.output())
	}
	_ = first
	// --timeout ends a follow as asked: exit 0.
	if r := e.run("", "sandbox", "logs", "--follow", "--timeout", "300ms", "--method", "DELETE"); r.code != 0 || r.stdout != "" {
		t.Errorf("--follow --timeout: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "listen", "--print-json", "--timeout", "300ms"); r.code != 0 || !strings.Contains(r.stderr, "Ready") {
		t.Errorf("listen --timeout: exit %d, %q", r.code, r.stderr)
	}
}

// TestListenReconnects: a feed that ends is followed again, resuming
// after the last notification (Last-Event-ID); what the sandbox says was
// missed is said on stderr, and so is the reconnection. The feed here is
// scripted: the second connection must carry the first one's position.
func TestListenReconnects(t *testing.T) {
	recv := newReceiver(t)
	resumed := make(chan string, 4)
	var mu sync.Mutex
	conns := 0
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sandbox/listen" || r.Header.Get("X-Identity") != testKey || r.Header.Get("X-Signature") == "" {
			http.Error(w, `{"error":"AUTH_001","message":"no"}`, http.StatusUnauthorized)
			return
		}
		mu.Lock()
		conns++
		n := conns
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		note := func(id int, status string) {
			body, _ := json.Marshal(fmt.Sprintf(`{"id":"p-1","status":%q}`, status))
			fmt.Fprintf(w, "id: %d\nevent: notification\ndata: {\"kind\":\"payment\",\"id\":\"p-1\",\"status\":%q,\"notify_url\":\"\","+
				"\"headers\":{\"Content-Type\":\"application/json\",\"X-Notification-Token\":\"lst_tok_0123456789\"},\"body\":%s}\n\n", id, status, body)
		}
		switch n {
		case 1:
			fmt.Fprint(w, "event: session\ndata: {\"token\":\"lst_tok_0123456789\",\"position\":6}\n\n")
			note(7, "PROCESSING")
			// The connection ends here: a restart, a network failure.
		default:
			resumed <- r.Header.Get("Last-Event-ID")
			fmt.Fprint(w, "event: session\ndata: {\"token\":\"lst_tok_0123456789\",\"position\":7}\n\n")
			fmt.Fprint(w, "event: missed\ndata: {\"from\":8,\"to\":10,\"count\":3,\"reason\":\"slow\"}\n\n")
			note(11, "COMPLETED")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	t.Cleanup(feed.Close)
	e := &testEnv{t: t}
	l := e.background(map[string]string{"PAYKIT_BASE_URL": feed.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret},
		"listen", "--forward-to", recv.url(), "-o", "json")
	if tok := sessionToken(t, l); tok != "lst_tok_0123456789" {
		t.Errorf("session token %q", tok)
	}
	if g := recv.next(t); string(g.body) != `{"id":"p-1","status":"PROCESSING"}` {
		t.Errorf("forwarded %s", g.body)
	}
	select {
	case id := <-resumed:
		if id != "7" {
			t.Errorf("resumed with Last-Event-ID %q, want 7", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no reconnection within 20s")
	}
	l.line(t, l.errs, `^paykit: reconnected; resuming after position 7$`)
	l.line(t, l.errs, `^paykit: missed 3 notifications, positions 8 to 10 \(this listener fell behind and the sandbox dropped its oldest\)$`)
	if g := recv.next(t); string(g.body) != `{"id":"p-1","status":"COMPLETED"}` {
		t.Errorf("forwarded %s", g.body)
	}
	var d delivered
	for _, want := range []string{"PROCESSING", "COMPLETED"} {
		if err := json.Unmarshal([]byte(l.line(t, l.out, want)), &d); err != nil || d.Resource != "payment" || d.ID != "p-1" || d.Answer != 200 {
			t.Errorf("-o json line %+v (%v)", d, err)
		}
	}
	if d.Position != 11 {
		t.Errorf("position %d, want 11", d.Position)
	}
	l.stop(t)
}

// bodyDiff says where two bodies part, without their text: a body holds
// card and phone numbers, which no test output may show.
func bodyDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("bodies of %d and %d bytes differ from byte %d", len(got), len(want), i)
}

// The read a trigger names when a step's outcome is unknown is a command
// this CLI accepts: the resource by id once created, else a payment or
// payout by the ext_id the trigger gave it, and for a withdrawal (no
// ext_id) the terminals' balances.
func TestTriggerSettleIsACommand(t *testing.T) {
	root := newRoot(&app{env: &env{getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false }}})
	for _, c := range []struct {
		kind string
		run  triggerRun
		want string
	}{
		{"payment", triggerRun{ext: "trg-1"}, "paykit payments get --ext-id trg-1"},
		{"payout", triggerRun{ext: "trg-2"}, "paykit payouts get --ext-id trg-2"},
		{"withdrawal", triggerRun{ext: "trg-3"}, "paykit terminals"},
		{"withdrawal", triggerRun{ext: "trg-3", id: "wd 1"}, "paykit withdrawals get 'wd 1'"},
	} {
		got := triggerSettle(c.kind, &c.run)
		if got != c.want {
			t.Errorf("%s %+v: settle %q, want %q", c.kind, c.run, got, c.want)
			continue
		}
		args := strings.Fields(strings.ReplaceAll(strings.TrimPrefix(got, "paykit "), "'", ""))
		cmd, rest, err := root.Find(args)
		if err == nil {
			err = cmd.ParseFlags(rest)
		}
		if err != nil || cmd == root {
			t.Errorf("%q is no command of paykit: %v", got, err)
		}
	}
}

// listen -o csv writes its header once, then one row of those columns per
// forwarded notification (the table's arrow is not a column).
func TestListenCSVHasAHeader(t *testing.T) {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(rcv.Close)
	var out bytes.Buffer
	a := &app{out: &out, output: "csv", env: &env{getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false }}}
	clock := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	l := &listener{a: a, opts: &ListenOptions{app: a, ForwardTo: rcv.URL, now: func() time.Time { return clock }}}
	for i, id := range []string{"p1", "p2"} {
		n := &sandbox.ListenNotification{Position: uint64(i + 1), Kind: "payment", ID: id, Status: "COMPLETED", Body: []byte(`{}`)}
		if err := l.event(sandbox.ListenEvent{Notification: n}); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\r\n") // CSV lines end in CRLF
	if len(lines) != 3 || lines[0] != strings.Join(listenHeader, ",") {
		t.Fatalf("csv output:\n%s\nwant the header %v, then 2 rows", out.String(), listenHeader)
	}
	for i, row := range lines[1:] {
		f := strings.Split(row, ",")
		if len(f) != len(listenHeader) || f[1] != "payment" || f[2] != []string{"p1", "p2"}[i] || f[3] != "COMPLETED" || f[4] != "204" || f[5] != "0ms" {
			t.Errorf("row %d %q: want %d columns: at, payment, its id, COMPLETED, 204, 0ms", i, row, len(listenHeader))
		}
	}
}
