package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestExplicitProfileWinsOverEnvironment: --profile on the command line
// wins over exported PAYKIT_* variables, as aws-cli's --profile wins over
// AWS_ACCESS_KEY_ID: the payout goes to the profile's service and none
// reaches the environment's. PAYKIT_PROFILE, itself from the environment,
// still yields to the variables. The question on a terminal names the
// profile and its host.
func TestExplicitProfileWinsOverEnvironment(t *testing.T) {
	staging, other := newEnv(t), newEnv(t)
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte("[staging]\nbase_url = "+staging.srv.URL+"\napi_key = "+testKey+"\nsecret = "+testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PAYKIT_CONFIG": path, "PAYKIT_BASE_URL": other.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}
	payout := []string{"payouts", "create", "--ext-id", "p-env", "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "Ivan Petrov"}
	r := staging.runEnv(vars, "", append([]string{"--profile", "staging"}, append(payout, "--yes")...)...)
	if r.code != 0 {
		t.Fatalf("--profile staging: exit %d, %q", r.code, r.stderr)
	}
	if s, o := staging.sb.RequestCount("POST", "/v1/payouts"), other.sb.RequestCount("POST", "/v1/payouts"); s != 1 || o != 0 {
		t.Fatalf("--profile staging with PAYKIT_* exported: %d payouts on the profile's service, %d on the environment's; want 1 and 0", s, o)
	}
	// PAYKIT_PROFILE is the environment too: the variables win over it.
	vars["PAYKIT_PROFILE"] = "staging"
	r = staging.runEnv(vars, "", append(payout[:3:3], "p-env-2", "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "I P", "--yes")...)
	if r.code != 0 || other.sb.RequestCount("POST", "/v1/payouts") != 1 {
		t.Fatalf("PAYKIT_PROFILE with PAYKIT_* exported: exit %d, %d payouts on the environment's service; want 1", r.code, other.sb.RequestCount("POST", "/v1/payouts"))
	}
	delete(vars, "PAYKIT_PROFILE")
	// On a terminal the question says where the money goes.
	r = staging.inProcessEnv(vars, "n\n", append([]string{"--profile", "staging"}, payout...)...)
	want := "on " + strings.TrimPrefix(staging.srv.URL, "http://") + ` (profile "staging")? [y/N] `
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("the question: exit %d, stderr %q; want it to end %q", r.code, r.stderr, want)
	}
}

// TestConfigLineNotEchoed: a malformed config line is refused (exit 4)
// with its line number and none of its text, even when it parses as
// "key = value" (a base64 secret pasted alone ends in "=").
func TestConfigLineNotEchoed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	const secret = "c2tfbGl2ZV9zM2NyM3RfdmFsdWU="
	for _, body := range []string{"[default]\n" + secret + "\n", "[default]\n" + secret + "=\n", "[default]\nbase_url = x\n" + secret + " = y\n"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		e := &testEnv{t: t}
		r := e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "balance")
		if r.code != 4 || strings.Contains(r.stderr, "c2tfbGl2ZV9") || !strings.Contains(r.stderr, path+":") {
			t.Fatalf("malformed line %q: exit %d, stderr %q; want 4, the line number and none of its text", body, r.code, r.stderr)
		}
	}
}

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
