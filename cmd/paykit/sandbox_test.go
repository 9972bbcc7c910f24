package main

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
