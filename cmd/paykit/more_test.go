package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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

// TestConfigFile: a profile is read from the file named by PAYKIT_CONFIG;
// a file others can read is refused with exit 4 and the chmod that fixes
// it, before any request, and without printing a line of it.
func TestConfigFile(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "paykit config")
	body := "# test\n[default]\nbase_url = http://127.0.0.1:1\n\n[staging]\nbase_url = " + e.srv.URL + "\napi_key = " + testKey + "\nsecret = \"" + testSecret + "\"\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	before := len(e.sb.Requests())
	r := e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "--profile", "staging", "balance")
	want := "chmod 600 '" + path + "'"
	if r.code != 4 || !strings.Contains(r.stderr, want) || r.stdout != "" {
		t.Fatalf("group-readable config: exit %d, stderr %q; want 4 and %q", r.code, r.stderr, want)
	}
	if strings.Contains(r.stderr, testSecret) || strings.Contains(r.stderr, testKey) {
		t.Fatal("the refusal printed a secret")
	}
	if len(e.sb.Requests()) != before {
		t.Fatal("a request was sent with a refused config file")
	}
	// Readable by the group alone is refused too, as is writable by others.
	for _, mode := range []os.FileMode{0o640, 0o602} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		r = e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "--profile", "staging", "balance")
		if r.code != 4 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "(mode "+fmt.Sprintf("%04o", mode)+")") {
			t.Fatalf("config mode %04o: exit %d, stderr %q", mode, r.code, r.stderr)
		}
	}
	if len(e.sb.Requests()) != before {
		t.Fatal("a request was sent with a refused config file")
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "--profile", "staging", "balance", "-o", "json")
	if r.code != 0 || r.stdout != `{"balance":1000.00,"balance_frozen":0.00,"currency":"USDT"}`+"\n" {
		t.Fatalf("profile staging: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// PAYKIT_PROFILE picks it too; the environment wins over the file.
	r = e.runEnv(map[string]string{"PAYKIT_CONFIG": path, "PAYKIT_PROFILE": "staging", "PAYKIT_SECRET": "wrong"}, "", "balance")
	if r.code != 4 {
		t.Fatalf("PAYKIT_SECRET over the profile: exit %d, want 4 (refused by the service)", r.code)
	}
	// The default profile lacks the key and secret: named, exit 4.
	r = e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "balance")
	if r.code != 4 || !strings.Contains(r.stderr, "missing PAYKIT_API_KEY, PAYKIT_SECRET") {
		t.Fatalf("incomplete profile: exit %d, stderr %q", r.code, r.stderr)
	}
	// A malformed line is refused without being echoed.
	if err := os.WriteFile(path, []byte("[default]\n"+testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "balance")
	if r.code != 4 || strings.Contains(r.stderr, testSecret) || !strings.Contains(r.stderr, ":2: want key = value") {
		t.Fatalf("malformed config: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestSandboxProfile: with no config file, --profile sandbox is the local
// sandbox with its default credentials.
func TestSandboxProfile(t *testing.T) {
	env := map[string]string{"PAYKIT_CONFIG": filepath.Join(t.TempDir(), "none")}
	cr, err := loadCredentials(func(k string) string { return env[k] }, "sandbox", false)
	if err != nil {
		t.Fatal(err)
	}
	if cr.baseURL != "http://127.0.0.1:8080" || cr.apiKey != sandbox.DefaultAPIKey || cr.secret != sandbox.DefaultSecret {
		t.Fatalf("sandbox profile: %q %q (secret set: %v)", cr.baseURL, cr.apiKey, cr.secret != "")
	}
	if _, err := loadCredentials(func(k string) string { return env[k] }, "prod", false); err == nil {
		t.Fatal("an unknown profile without a file gave credentials")
	}
	// The binary: doctor's first line names the URL before any request,
	// whatever listens there (or not).
	e := &testEnv{t: t}
	r := e.runEnv(env, "", "--profile", "sandbox", "doctor", "--timeout", "5s")
	if !strings.HasPrefix(r.stdout, "ok    base URL             http://127.0.0.1:8080 (plain http on loopback: a local sandbox)\n") {
		t.Fatalf("--profile sandbox: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// A config file's [sandbox] wins over the built-in one.
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte("[sandbox]\nbase_url = http://127.0.0.1:9\napi_key = k\nsecret = s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cr, err = loadCredentials(func(k string) string { return map[string]string{"PAYKIT_CONFIG": path}[k] }, "sandbox", false)
	if err != nil || cr.baseURL != "http://127.0.0.1:9" || cr.apiKey != "k" {
		t.Fatalf("[sandbox] of the file: %v %v", cr, err)
	}
}

// TestConfigDefaultLocation: with no PAYKIT_CONFIG, the profiles file is
// <user config dir>/paykit/config ($XDG_CONFIG_HOME on Linux), checked by
// the built binary.
func TestConfigDefaultLocation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("os.UserConfigDir follows XDG_CONFIG_HOME on Linux only")
	}
	e := newEnv(t)
	home := t.TempDir()
	path := filepath.Join(home, "xdg", "paykit", "config")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	body := "[ops]\nbase_url = " + e.srv.URL + "\napi_key = " + testKey + "\nsecret = " + testSecret + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.runEnv(map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, "xdg")}, "", "--profile", "ops", "withdrawals", "fee", "-o", "csv")
	if r.code != 0 || r.stdout != "fee,currency\r\n1.50,USDT\r\n" {
		t.Fatalf("profile ops from $XDG_CONFIG_HOME/paykit/config: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.runEnv(map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, "xdg")}, "", "--profile", "nope", "balance")
	if r.code != 4 || !strings.Contains(r.stderr, "no profile [nope] in "+path) {
		t.Fatalf("unknown profile: exit %d, %q", r.code, r.stderr)
	}
}

// TestNetworkFailure: no service at the base URL is exit 1, with the
// reason, and no secret.
func TestNetworkFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	e := &testEnv{t: t}
	r := e.runEnv(map[string]string{"PAYKIT_BASE_URL": base, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "balance")
	if r.code != 1 || !strings.Contains(r.stderr, "connection refused") || strings.Contains(r.stderr+r.stdout, testSecret) || strings.Contains(r.stderr+r.stdout, testKey) {
		t.Fatalf("no service: exit %d, %q", r.code, r.stderr)
	}
	// A base URL the SDK refuses is a credentials error (exit 4) naming
	// where the values came from, and not the URL's password.
	r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": "http://user:" + testSecret + "@127.0.0.1:1", "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "balance")
	if r.code != 4 || r.stderr != "paykit: credentials (from the environment): base URL must not carry credentials\n" {
		t.Fatalf("base URL with a password: exit %d, %q", r.code, r.stderr)
	}
}

// TestCrashMessage: a panic inside a command is exit 70 with a trace but
// not the panic's value, which could hold a request or a config line.
func TestCrashMessage(t *testing.T) {
	var errb bytes.Buffer
	code := run(context.Background(), []string{"--version"}, &env{
		stdin: strings.NewReader(""), stdout: panicWriter{}, stderr: &errb, getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false },
	})
	if code != 70 || !strings.Contains(errb.String(), "internal error") || !strings.Contains(errb.String(), "goroutine") || strings.Contains(errb.String(), testSecret) {
		t.Fatalf("crash: exit %d, stderr %q", code, errb.String())
	}
}

// panicWriter panics with a secret in its value.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("boom: secret=" + testSecret) }

// TestSandboxCommand runs `paykit sandbox` as a process, points the
// sandbox profile at it, and stops it with SIGINT (exit 0).
func TestSandboxCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "sandbox", "-addr", "127.0.0.1:0", "-start-balance", "12.5", "-api-key", testKey, "-secret", testSecret)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("no banner; stderr %q", stderr.String())
	}
	banner := sc.Text() + "\n"
	base := strings.TrimPrefix(sc.Text(), "paykit sandbox listening on ")
	rest := make(chan string)
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		rest <- b.String()
	}()
	e := &testEnv{t: t}
	r := e.runEnv(map[string]string{"PAYKIT_BASE_URL": base, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "balance", "-o", "json")
	if r.code != 0 || r.stdout != `{"balance":12.50,"balance_frozen":0.00,"currency":"USDT"}`+"\n" {
		t.Errorf("balance from paykit sandbox: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("paykit sandbox after SIGINT: %v; stderr %q", err, stderr.String())
	}
	banner += <-rest
	if !strings.Contains(stderr.String(), "/v1/balance") {
		t.Errorf("the sandbox logged no request line: %q", stderr.String())
	}
	// The banner names the profile instead of the credentials; neither it
	// nor the request log shows the key or the secret it was given.
	if !strings.Contains(banner, "paykit --profile sandbox") {
		t.Errorf("banner without the profile hint: %q", banner)
	}
	if all := banner + stderr.String(); strings.Contains(all, testKey) || strings.Contains(all, testSecret) {
		t.Errorf("paykit sandbox printed its credentials:\n%s", all)
	}
	r = e.runEnv(nil, "", "sandbox", "-help")
	if r.code != 0 || !strings.Contains(r.stdout, "-webhook-retry-wait") {
		t.Errorf("sandbox -help: exit %d, %q", r.code, r.stdout)
	}
	r = e.runEnv(nil, "", "sandbox", "-log-format", "xml")
	if r.code != 2 {
		t.Errorf("sandbox with a bad flag value: exit %d, want 2", r.code)
	}
}

// TestDoctor: every line's verdict against a healthy sandbox; a skewed
// Date header warns; refused credentials fail with exit 4; and TLS is
// checked on an https base URL (the test's CA trusted by SSL_CERT_FILE).
func TestDoctor(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "doctor")
	for _, want := range []string{"ok    base URL", "ok    clock", "ok    credentials", "ok    latency", "ok    banks                18 banks listed",
		"info  refusals             a wrong signature: HTTP 401 AUTH_001; an unknown key: HTTP 401 AUTH_001",
		"info  payout list limit    a larger limit is lowered to 1000, not refused (asked 10000)",
		"info  payout list order    not learnt: there is no payout to look at"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor: no %q in\n%s", want, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("doctor: exit %d, stderr %q", r.code, r.stderr)
	}
	if n := e.sb.RequestCount("POST", "/v1/payouts") + e.sb.RequestCount("POST", "/v1/transfers") + e.sb.RequestCount("POST", "/v1/withdrawals"); n != 0 {
		t.Errorf("doctor moved money: %d requests", n)
	}
	r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": "nope"}, "", "doctor")
	if r.code != 4 || !strings.Contains(r.stdout, "FAIL  credentials") {
		t.Errorf("doctor, wrong secret: exit %d\n%s", r.code, r.stdout)
	}
	// Base URLs the SDK refuses: a line saying why, exit 4, no request
	// (the addresses are not reachable from a test), no password shown.
	for base, want := range map[string]string{
		"http://10.255.255.1:1":                    "FAIL  base URL             http://10.255.255.1:1: plain http beyond loopback would send the key and signatures in clear text; the SDK refuses it: use https://\n",
		"ftp://example.com":                        "FAIL  base URL             ftp://example.com: the scheme must be https (or http on loopback)\n",
		"ht tp://u:" + testSecret + "@example.com": "FAIL  base URL             not an absolute http(s) URL\n",
		"http://u:" + testSecret + "@127.0.0.1:1": "ok    base URL             http://u:xxxxx@127.0.0.1:1 (plain http on loopback: a local sandbox)\n" +
			"FAIL  client               credentials (from the environment): NewClient: base URL must not carry credentials\n",
	} {
		r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": base, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "doctor")
		if r.code != 4 || r.stdout != want || strings.Contains(r.stdout+r.stderr, testSecret) {
			t.Errorf("doctor with base URL %q: exit %d\n%s%s", base, r.code, r.stdout, r.stderr)
		}
	}

	// A service whose clock is an hour behind, over TLS.
	skewed := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat))
		e.sb.ServeHTTP(w, r)
	}))
	defer skewed.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: skewed.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": skewed.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, "SSL_CERT_FILE": ca}, "", "doctor")
	for _, want := range []string{"ok    TLS", "TLS 1.3", "warn  clock                skew 1h0m", "ok    credentials"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor over TLS with a skewed clock: no %q in\n%s\nstderr %s", want, r.stdout, r.stderr)
		}
	}
}

// TestDoctorLearns: what doctor learns of the spec's unsaid points, from
// a service that differs from the sandbox where the spec is silent: it
// refuses a payout-list limit over 2500 (doctor bisects to the largest
// accepted), lists newest first, sends rate-limit headers; and from the
// sandbox (oldest first, both bounds inclusive) with payouts created a
// minute apart. Every probe is a read.
func TestDoctorLearns(t *testing.T) {
	var mu sync.Mutex
	now := frozen
	sb := sandbox.New(sandbox.Config{
		Merchants: []sandbox.Merchant{sandbox.DefaultMerchant(testKey, testSecret)},
		Now:       func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
	})
	t.Cleanup(sb.Close)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	sdk, err := paykit.NewClient(srv.URL, testKey, paykit.HMACSigner(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := sdk.CreatePayout(context.Background(), paykit.CreatePayoutParams{ExtID: fmt.Sprintf("po-%d", i),
			Amount: decimal.RequireFromString("10"), Method: paykit.PayoutMethodCard, Requisites: testCard, HolderName: "I P"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		now = now.Add(time.Minute)
		mu.Unlock()
	}
	e := &testEnv{t: t}
	vars := map[string]string{"PAYKIT_BASE_URL": srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}
	r := e.runEnv(vars, "", "doctor")
	for _, want := range []string{
		"info  payout list order    oldest first (created_at of the first and last of 3 payouts)\n",
		"info  payout list bounds   from is inclusive, to is inclusive",
		"info  rate limits          no rate-limit header on any answer",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor on the sandbox: no %q in\n%s", want, r.stdout)
		}
	}

	// Another service: newest first, from exclusive, a limit over 2500
	// refused, rate-limit headers on every answer.
	type po struct {
		ID        string `json:"id"`
		ExtID     string `json:"ext_id"`
		Amount    int    `json:"amount"`
		Currency  string `json:"currency"`
		Method    string `json:"method"`
		Status    string `json:"status"`
		CreatedAt string `json:"created_at"`
	}
	var list []po
	for i := 2; i >= 0; i-- {
		list = append(list, po{fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), fmt.Sprintf("po-%d", i), 10, "RUB", "card", "pending",
			frozen.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	var limits []int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "600")
		w.Header().Set("X-RateLimit-Remaining", "599")
		if r.Method != "GET" || r.URL.Path != "/v1/payouts" {
			sb.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		offset, _ := strconv.Atoi(q.Get("offset"))
		mu.Lock()
		limits = append(limits, limit)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if limit > 2500 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"PAY_002","message":"limit is too large","data":{}}`)
			return
		}
		if limit == 0 {
			limit = 100
		}
		from, _ := time.Parse(time.RFC3339Nano, q.Get("from"))
		to, _ := time.Parse(time.RFC3339Nano, q.Get("to"))
		var match []po
		for _, p := range list {
			at, _ := time.Parse(time.RFC3339, p.CreatedAt)
			if !from.IsZero() && !at.After(from) || !to.IsZero() && at.After(to) {
				continue
			}
			match = append(match, p)
		}
		page := match[min(offset, len(match)):min(offset+limit, len(match))]
		_ = json.NewEncoder(w).Encode(map[string]any{"payouts": page, "total": len(match), "limit": limit, "offset": offset})
	}))
	t.Cleanup(other.Close)
	vars["PAYKIT_BASE_URL"] = other.URL
	r = e.runEnv(vars, "", "doctor")
	for _, want := range []string{
		"info  payout list limit    the largest limit accepted is 2500; limit=2501 is refused (PAY_002 (HTTP 400): limit is too large)\n",
		"info  payout list order    newest first (created_at of the first and last of 3 payouts)\n",
		"info  payout list bounds   from is exclusive, to is inclusive",
		`info  rate limits          X-RateLimit-Limit: "600", X-RateLimit-Remaining: "599"` + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor on another service: no %q in\n%s", want, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("doctor: exit %d, stderr %q", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(limits) > 25 {
		t.Errorf("doctor made %d payout-list reads to learn the limit: %v", len(limits), limits)
	}
}

// TestHelpEveryCommand: every command, groups and cobra's own help and
// completion commands included, answers --help from the built binary with
// an example and the exit codes.
func TestHelpEveryCommand(t *testing.T) {
	root := newRoot(&app{env: &env{getenv: os.Getenv, isTerminal: isTerminal}})
	e := &testEnv{t: t}
	var paths []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		paths = append(paths, c.CommandPath())
		if c.Example == "" {
			t.Errorf("%s has no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, p := range paths {
		args := append(strings.Fields(p)[1:], "--help")
		if p == "paykit sandbox" {
			// sandbox passes its flags through to paykit-sandbox's own
			// parser; cobra's help for it is "paykit help sandbox".
			args = []string{"help", "sandbox"}
		}
		r := e.runEnv(nil, "", args...)
		codes := strings.Contains(r.stdout, "Exit codes:\n  0  success") && strings.Contains(r.stdout, "3  unknown outcome") &&
			strings.Contains(r.stdout, "4  credentials refused")
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:\n  ") || !codes {
			t.Errorf("paykit %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// The 16 API commands of issue 22 (get --ext-id is a flag of get),
	// doctor, wait, sandbox; the groups payments, disputes, payouts,
	// transfers, withdrawals; the root, help, the config topic, completion
	// and its four shells; auth and auth status; api; config's init, set,
	// get and list; the sandbox's eight controls, webhooks' list and resend.
	if len(paths) != 19+5+1+1+1+5+2+1+4+10 {
		t.Errorf("%d commands walked: %v", len(paths), paths)
	}
}

// TestCompletionAndVersion: completion scripts for bash, zsh and fish
// that complete paykit's own commands and flag values, and a --version
// naming the SDK's version.
func TestCompletionAndVersion(t *testing.T) {
	e := &testEnv{t: t}
	for sh, mark := range map[string]string{"bash": "__start_paykit", "zsh": "#compdef paykit", "fish": "complete -c paykit"} {
		r := e.runEnv(nil, "", "completion", sh)
		if r.code != 0 || !strings.Contains(r.stdout, mark) || len(r.stdout) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes, no %q", sh, r.code, len(r.stdout), mark)
		}
	}
	// What the scripts ask the binary for.
	r := e.runEnv(nil, "", "__complete", "payouts", "list", "--status", "")
	if !strings.Contains(r.stdout, "completed\n") {
		t.Errorf("no completion of --status values: %q", r.stdout)
	}
	r = e.runEnv(nil, "", "__complete", "pay")
	if !strings.Contains(r.stdout, "payments\t") || !strings.Contains(r.stdout, "payouts\t") {
		t.Errorf("no completion of commands: %q", r.stdout)
	}
	r = e.runEnv(nil, "", "__complete", "wait", "")
	if !strings.Contains(r.stdout, "payment\n") || !strings.Contains(r.stdout, "payout\n") {
		t.Errorf("no completion of wait's argument: %q", r.stdout)
	}
	// The binary's own version is "(devel)" or, when the build stamps it
	// from version control, a pseudo-version; the SDK's is paykit.Version.
	r = e.runEnv(nil, "", "--version")
	want := regexp.MustCompile(`^paykit (\(devel\)|v[0-9][^ ]*) \(paykit-go SDK ` + regexp.QuoteMeta(paykit.Version) + `\)\n$`)
	if r.code != 0 || !want.MatchString(r.stdout) {
		t.Errorf("--version: %q, want %s", r.stdout, want)
	}
}

// TestLocalTime: times are UTC unless --local-time asks for the local zone.
func TestLocalTime(t *testing.T) {
	e := newEnv(t)
	vars := map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, "TZ": "Asia/Tokyo"}
	if r := e.runEnv(vars, "", "payments", "create", "--ext-id", "o-1", "--amount", "100"); !strings.Contains(r.stdout, "created_at:   2026-11-03T09:30:00Z\n") {
		t.Fatalf("default: %q %q", r.stdout, r.stderr)
	}
	r := e.runEnv(vars, "", "payments", "get", "--ext-id", "o-1", "--local-time")
	if !strings.Contains(r.stdout, "created_at:   2026-11-03T18:30:00+09:00\n") || !strings.Contains(r.stdout, "valid_until:  2026-11-03T18:50:00+09:00\n") {
		t.Fatalf("--local-time in Asia/Tokyo: %q %q", r.stdout, r.stderr)
	}
}

// TestSandboxFlagsMatchPaykitSandbox: `paykit sandbox` takes exactly the
// flags of paykit-sandbox, read from both binaries' -help. Both run
// internal/sandboxcli, so a flag added there (-db, -config, -autopilot...)
// reaches both with no change here; this test catches a copy creeping back.
func TestSandboxFlagsMatchPaykitSandbox(t *testing.T) {
	other := filepath.Join(t.TempDir(), "paykit-sandbox")
	if out, err := exec.Command("go", "build", "-C", "../..", "-o", other, "./cmd/paykit-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	flagsOf := func(out []byte) []string {
		var names []string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "  -") {
				names = append(names, strings.Fields(line)[0])
			}
		}
		return names
	}
	want, _ := exec.Command(other, "-help").Output()
	got, _ := exec.Command(binary, "sandbox", "-help").Output()
	if w, g := strings.Join(flagsOf(want), " "), strings.Join(flagsOf(got), " "); w != g || len(flagsOf(want)) < 10 {
		t.Fatalf("paykit sandbox flags:\n  %s\npaykit-sandbox flags:\n  %s", g, w)
	}
}

// TestListAllStuck: a service that ignores offset (the same payout on
// every page, a total it never reaches) ends payouts list --all with exit
// 1 and the SDK's reason after two pages, not an endless loop, and prints
// nothing on stdout.
func TestListAllStuck(t *testing.T) {
	pages := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pages++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"payouts":[{"id":"00000000-0000-4000-8000-000000000001","ext_id":"a","amount":1,"currency":"RUB","method":"card","status":"pending","created_at":"2026-11-03T09:30:00Z"}],"total":1000000,"limit":1,"offset":%s}`,
			cmp.Or(r.URL.Query().Get("offset"), "0"))
	}))
	t.Cleanup(srv.Close)
	e := &testEnv{t: t}
	r := e.runEnv(map[string]string{"PAYKIT_BASE_URL": srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}, "", "payouts", "list", "--all", "--limit", "1", "-o", "csv")
	mu.Lock()
	defer mu.Unlock()
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "no payout not already seen") || pages != 2 {
		t.Fatalf("exit %d after %d pages, stdout %q, stderr %q", r.code, pages, r.stdout, r.stderr)
	}
}
