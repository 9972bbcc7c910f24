package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
	cr, err := loadCredentials(func(k string) string { return env[k] }, "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	if cr.baseURL != "http://127.0.0.1:8080" || cr.apiKey != sandbox.DefaultAPIKey || cr.secret != sandbox.DefaultSecret {
		t.Fatalf("sandbox profile: %q %q (secret set: %v)", cr.baseURL, cr.apiKey, cr.secret != "")
	}
	if _, err := loadCredentials(func(k string) string { return env[k] }, "prod"); err == nil {
		t.Fatal("an unknown profile without a file gave credentials")
	}
}

// TestSandboxCommand runs `paykit sandbox` as a process, points the
// sandbox profile at it, and stops it with SIGINT (exit 0).
func TestSandboxCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "sandbox", "-addr", "127.0.0.1:0", "-start-balance", "12.5")
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
	base := strings.TrimPrefix(sc.Text(), "paykit sandbox listening on ")
	go func() {
		for sc.Scan() {
		}
	}()
	e := &testEnv{t: t}
	r := e.runEnv(map[string]string{"PAYKIT_PROFILE": "sandbox", "PAYKIT_BASE_URL": base, "PAYKIT_CONFIG": "/nonexistent/x"}, "", "balance", "-o", "json")
	if r.code != 0 || r.stdout != `{"balance":12.50,"balance_frozen":0.00,"currency":"USDT"}`+"\n" {
		t.Errorf("balance from paykit sandbox: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("paykit sandbox after SIGINT: %v; stderr %q", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "/v1/balance") {
		t.Errorf("the sandbox logged no request line: %q", stderr.String())
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
	for _, want := range []string{"ok    base URL", "ok    clock", "ok    credentials", "ok    latency", "ok    payout list limit    limit=1000 accepted"} {
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

// TestHelpEveryCommand: every command has --help with an example, and the
// root's help documents the exit codes.
func TestHelpEveryCommand(t *testing.T) {
	root := newRoot(&app{env: &env{getenv: os.Getenv, isTerminal: isTerminal}})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Name() != "help" && c.Name() != "completion" && !strings.HasPrefix(c.CommandPath(), "paykit completion") {
			n++
			if c.Example == "" {
				t.Errorf("%s has no example", c.CommandPath())
			}
			var out, errb bytes.Buffer
			args := append(strings.Fields(c.CommandPath())[1:], "--help")
			if c.Name() == "sandbox" {
				args = []string{"help", "sandbox"}
			}
			code := run(context.Background(), args, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv, isTerminal: isTerminal})
			if code != 0 || !strings.Contains(out.String(), "Examples:") || !strings.Contains(out.String(), "Exit codes:") {
				t.Errorf("%s --help: exit %d\n%s", c.CommandPath(), code, out.String())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n != 19 { // the 17 API commands of issue 22, doctor, wait, sandbox: 19 with --help
		t.Errorf("only %d commands walked", n)
	}
}

// TestCompletionAndVersion: completion scripts for bash, zsh and fish, and
// a --version naming the SDK's version.
func TestCompletionAndVersion(t *testing.T) {
	e := &testEnv{t: t}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := e.runEnv(nil, "", "completion", sh)
		if r.code != 0 || !strings.Contains(r.stdout, "paykit") || len(r.stdout) < 1000 {
			t.Errorf("completion %s: exit %d, %d bytes", sh, r.code, len(r.stdout))
		}
	}
	r := e.runEnv(nil, "", "__complete", "payouts", "list", "--status", "")
	if !strings.Contains(r.stdout, "completed\n") {
		t.Errorf("no completion of --status values: %q", r.stdout)
	}
	r = e.runEnv(nil, "", "--version")
	if r.code != 0 || r.stdout != "paykit (devel) (paykit-go SDK "+paykit.Version+")\n" {
		t.Errorf("--version: %q", r.stdout)
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
// flags of paykit-sandbox, read from both binaries' -help (the adapter
// copies the flag set until it moves to a shared package).
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
