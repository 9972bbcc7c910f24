package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestSandboxControls: a payment, a payout and a withdrawal followed to
// completion with paykit alone: the sandbox's controls as commands, each
// printing the resource as read back; the clock, a fault, the webhook log
// and a resend, and reset.
func TestSandboxControls(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var hooks []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hooks = append(hooks, r.URL.Path)
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	if r := e.run("", "payments", "create", "--ext-id", "sc-1", "--amount", "300", "--notify-url", receiver.URL+"/hook"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := e.run("", "payments", "confirm", "--ext-id", "sc-1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	p, err := e.sdk.GetPaymentByExtID(context.Background(), "sc-1")
	if err != nil {
		t.Fatal(err)
	}
	r := e.run("", "sandbox", "verify", p.ID, "completed")
	if r.code != 0 || !strings.Contains(r.stdout, "status:       COMPLETED\n") {
		t.Fatalf("sandbox verify: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "sandbox", "verify", p.ID, "completed"); r.code != 1 || !strings.Contains(r.stderr, "SANDBOX_") {
		t.Fatalf("verify twice: exit %d, %q", r.code, r.stderr)
	}
	po, err := e.sdk.CreatePayout(context.Background(), paykit.CreatePayoutParams{ExtID: "sc-p", Amount: decimal.RequireFromString("10"), Method: paykit.PayoutMethodCard,
		Requisites: testCard, HolderName: "I P"})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "sandbox", "payout", po.ID, "completed", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, `"status":"completed"`) {
		t.Fatalf("sandbox payout: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	w, err := e.sdk.CreateWithdrawal(context.Background(), paykit.CreateWithdrawalParams{TerminalID: "term_sandbox_main", Amount: decimal.RequireFromString("5"), Address: "TXYZ"})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "sandbox", "withdrawal", w.ID, "completed", "--tx-hash", "abc123"); r.code != 0 || !strings.Contains(r.stdout, "tx_hash:     abc123\n") {
		t.Fatalf("sandbox withdrawal: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "sandbox", "advance", "20m"); r.code != 0 || r.stdout != "clock:  2026-11-03T09:50:00Z\n" {
		t.Fatalf("sandbox advance: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "sandbox", "advance", "1.5s"); r.code != 2 {
		t.Fatalf("advance by a fraction of a second: exit %d", r.code)
	}
	if r := e.run("", "sandbox", "fault", "--method", "GET", "--path", "/v1/balance", "--mode", "error_before", "--status", "503", "--count", "10"); r.code != 0 {
		t.Fatalf("sandbox fault: exit %d, %q", r.code, r.stderr)
	}
	if r := e.run("", "balance", "--timeout", "2s"); r.code == 0 {
		t.Fatalf("balance under an injected fault: exit 0, %q", r.stdout)
	}
	if err := e.sb.FlushWebhooks(context.Background()); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "sandbox", "webhooks", "list", "-o", "json")
	var ds []struct {
		ID string `json:"id"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ds) != nil || len(ds) < 2 {
		t.Fatalf("webhooks list: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "sandbox", "webhooks", "list"); r.code != 0 || !strings.Contains(r.stdout, "sc-1") || !strings.Contains(r.stdout, "delivered") {
		t.Fatalf("webhooks list table: %q", r.stdout)
	}
	mu.Lock()
	before := len(hooks)
	mu.Unlock()
	if r := e.run("", "sandbox", "webhooks", "resend", ds[0].ID); r.code != 0 || !strings.Contains(r.stdout, ds[0].ID) {
		t.Fatalf("webhooks resend: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if err := e.sb.FlushWebhooks(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	after := len(hooks)
	mu.Unlock()
	if after != before+1 {
		t.Fatalf("resend: %d deliveries reached the receiver, want %d", after, before+1)
	}
	if r := e.run("", "sandbox", "reset"); r.code != 0 {
		t.Fatalf("sandbox reset: exit %d, %q", r.code, r.stderr)
	}
	if _, err := e.sdk.GetPayment(context.Background(), p.ID); err == nil {
		t.Fatal("the payment survived sandbox reset")
	}
}

// TestCompletionOfValues: Tab completes profile names (the config file's
// and the built-in sandbox), terminal ids and bank codes (from the service
// the command line would use), with their names as descriptions.
func TestCompletionOfValues(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "__complete", "transfers", "create", "--from", "")
	if r.code != 0 || !strings.Contains(r.stdout, "term_sandbox_main\tMain terminal\n") || !strings.Contains(r.stdout, "term_sandbox_reserve\t") {
		t.Fatalf("terminal ids: %q %q", r.stdout, r.stderr)
	}
	r = e.run("", "__complete", "withdrawals", "create", "--terminal", "")
	if !strings.Contains(r.stdout, "term_sandbox_main\t") {
		t.Fatalf("withdrawals --terminal: %q", r.stdout)
	}
	r = e.run("", "__complete", "payouts", "create", "--bank", "")
	if !strings.Contains(r.stdout, "sber\tSberbank\n") || strings.Contains(r.stdout, "gazprom") {
		t.Fatalf("bank codes (active ones): %q", r.stdout)
	}
	path := t.TempDir() + "/config"
	if r := e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "--profile", "ops", "config", "set", "base_url", "https://x.example.com"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r = e.runEnv(map[string]string{"PAYKIT_CONFIG": path}, "", "__complete", "--profile", "")
	if !strings.Contains(r.stdout, "ops\n") || !strings.Contains(r.stdout, "sandbox\tthe local sandbox") {
		t.Fatalf("profiles: %q", r.stdout)
	}
}

// TestSandboxControlToken: a sandbox in remote mode refuses a control
// without its token, or with a wrong one; paykit exits 4 (credentials
// refused, as for the service's 401) and names PAYKIT_SANDBOX_CONTROL_TOKEN,
// where the token comes from, never printing the token itself. It exited
// 1 with the sandbox's message alone.
func TestSandboxControlToken(t *testing.T) {
	const token = "3c1f9be07a5d42e8b6f01c9d8e7a2b4f5d6c7e8f9a0b1c2d3e4f5a6b7c8d9e0f"
	const wrong = "9e0f3c1f9be07a5d42e8b6f01c9d8e7a2b4f5d6c7e8f9a0b1c2d3e4f5a6b7c8d"
	sb := sandbox.New(sandbox.Config{Merchants: []sandbox.Merchant{sandbox.DefaultMerchant(testKey, testSecret)}, ControlToken: token})
	t.Cleanup(sb.Close)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	e := &testEnv{t: t, sb: sb, srv: srv}
	vars := map[string]string{"PAYKIT_BASE_URL": srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret}
	host := strings.TrimPrefix(srv.URL, "http://")
	r := e.runEnv(vars, "", "sandbox", "advance", "20m")
	want := "paykit: the sandbox on " + host + " (credentials from the environment) wants a control token (SANDBOX_UNAUTHORIZED, HTTP 401) and none was sent: " +
		"set PAYKIT_SANDBOX_CONTROL_TOKEN to the -control-token the sandbox was started with\n"
	if r.code != 4 || r.stderr != want || r.stdout != "" {
		t.Errorf("no token: exit %d, stderr %q; want 4 and %q", r.code, r.stderr, want)
	}
	vars["PAYKIT_SANDBOX_CONTROL_TOKEN"] = wrong
	r = e.runEnv(vars, "", "sandbox", "reset")
	want = "paykit: the sandbox on " + host + " (credentials from the environment) refused the control token in PAYKIT_SANDBOX_CONTROL_TOKEN, " +
		fingerprint(wrong) + " (SANDBOX_UNAUTHORIZED, HTTP 401): set it to the -control-token the sandbox was started with\n"
	if r.code != 4 || r.stderr != want || r.stdout != "" {
		t.Errorf("a wrong token: exit %d, stderr %q; want 4 and %q", r.code, r.stderr, want)
	}
	vars["PAYKIT_SANDBOX_CONTROL_TOKEN"] = token
	if r := e.runEnv(vars, "", "sandbox", "advance", "20m"); r.code != 0 || !strings.HasPrefix(r.stdout, "clock:  ") {
		t.Errorf("the right token: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	e.mu.Lock()
	all := e.all.String()
	e.mu.Unlock()
	if strings.Contains(all, token) || strings.Contains(all, wrong) {
		t.Error("a control token was printed")
	}
}
