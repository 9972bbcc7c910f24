package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	paykit "github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// The test payout numbers, which the leak test looks for in full.
const (
	testCard  = "4111111111111111"
	testPhone = "+79001234567"
)

// TestSession runs every subcommand in every output format against one
// sandbox, compares each transcript with its golden file, then greps all
// output of the session for the API key, the secret, every signature the
// sandbox received and every full card and phone number, and finds none.
func TestSession(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	// Payments.
	r := e.step("payments_create", 0, "payments", "create", "--ext-id", "order-1001", "--amount", "1500.50", "--method", "SBP", "--bank", "sber")
	if !strings.Contains(r.stdout, "1500.50 RUB") {
		t.Errorf("amount not shown with two decimals: %s", r.stdout)
	}
	r = e.step("payments_create_json", 0, "payments", "create", "--ext-id", "order-1002", "--amount", "2000.00", "-o", "json")
	if !strings.Contains(r.stdout, `"amount":2000.00,`) {
		t.Errorf("-o json did not keep the service's number: %s", r.stdout)
	}
	pay2 := id(t, r)
	pay1 := id(t, e.run("", "payments", "get", "--ext-id", "order-1001", "-o", "json"))
	e.step("payments_get_extid", 0, "payments", "get", "--ext-id", "order-1001")
	e.step("payments_get_json", 0, "payments", "get", pay1, "-o", "json")
	e.step("payments_get_csv", 0, "payments", "get", pay1, "-o", "csv")
	png := filepath.Join(t.TempDir(), "receipt.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.step("payments_confirm", 0, "payments", "confirm", pay1, "--receipt", png)
	if got := e.sb.RequestCount("POST", "/v1/payments/{id}/confirm"); got != 1 {
		t.Errorf("confirm requests: %d, want 1", got)
	}
	e.step("payments_cancel", 0, "payments", "cancel", pay2)
	e.step("disputes_open", 0, "disputes", "open", pay2, "--amount", "2000.00", "--receipt-url", "https://example.com/r.png", "--comment", "paid late")
	e.step("disputes_cancel", 0, "disputes", "cancel", pay2, "-o", "json")

	// Payouts.
	e.step("payouts_create", 0, "payouts", "create", "--ext-id", "payout-77", "--amount", "500", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes")
	r = e.step("payouts_create_json", 0, "payouts", "create", "--ext-id", "payout-78", "--amount", "750.25", "--method", "sbp",
		"--requisites", testPhone, "--holder-name", "Olga Ivanova", "--bank", "sber", "--yes", "-o", "json")
	po2 := id(t, r)
	e.step("payouts_create_no_yes", 2, "payouts", "create", "--ext-id", "payout-79", "--amount", "1", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov")
	if _, err := e.sdk.GetPayoutByExtID(ctx, "payout-79"); err == nil {
		t.Error("a payout refused for want of --yes was sent")
	}
	e.step("payouts_get_extid", 0, "payouts", "get", "--ext-id", "payout-77")
	e.step("payouts_get_json", 0, "payouts", "get", po2, "-o", "json")
	e.step("payouts_list", 0, "payouts", "list")
	e.step("payouts_list_json", 0, "payouts", "list", "-o", "json")
	r = e.step("payouts_list_csv", 0, "payouts", "list", "-o", "csv")
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(recs) != 3 || recs[0][3] != "amount" || recs[1][3] != "500.00" || recs[2][3] != "750.25" || recs[1][6] != "************1111" {
		t.Errorf("payouts list -o csv does not read back as RFC 4180 with plain decimal amounts: %q (%v)", recs, err)
	}
	e.step("payouts_list_all_csv", 0, "payouts", "list", "--all", "--limit", "1", "-o", "csv")
	if got := e.sb.RequestCount("GET", "/v1/payouts"); got < 5 {
		t.Errorf("--all --limit 1 over 2 payouts made %d list requests in all, want at least 2 of its own", got)
	}
	e.step("payouts_list_all_json", 0, "payouts", "list", "--all", "--limit", "1", "-o", "json")
	e.step("payouts_list_status", 0, "payouts", "list", "--status", "completed", "--from", "2026-11-01", "--to", "2026-12-01")

	// Wait: the payout settles, the command returns it.
	if err := e.sb.SetPayoutStatus(po2, "completed"); err != nil {
		t.Fatal(err)
	}
	e.step("wait_payout", 0, "wait", "payout", po2, "--interval", "10ms")
	e.step("wait_payment_timeout", 1, "wait", "payment", pay1, "--interval", "10ms", "--timeout", "300ms")
	if err := e.sb.VerifyPayment(pay1, "completed"); err != nil {
		t.Fatal(err)
	}
	e.step("wait_payment", 0, "wait", "payment", pay1, "-o", "json")

	// Terminals, balance, banks.
	e.step("terminals", 0, "terminals")
	e.step("terminals_json", 0, "terminals", "-o", "json")
	e.step("terminals_csv", 0, "terminals", "-o", "csv")
	e.step("balance", 0, "balance")
	e.step("balance_json", 0, "balance", "-o", "json")
	e.step("banks", 0, "banks")
	e.step("banks_csv", 0, "banks", "-o", "csv")
	e.step("banks_json", 0, "banks", "-o", "json")

	// Money moves between terminals and out.
	e.step("transfers_create", 0, "transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID, "--amount", "100.00", "--yes")
	e.step("transfers_create_json", 0, "transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID, "--amount", "0.5", "--yes", "-o", "json")
	e.step("transfers_create_no_yes", 2, "transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID, "--amount", "1")
	r = e.step("withdrawals_create", 0, "withdrawals", "create", "--terminal", sandbox.DefaultMainTerminalID, "--amount", "50.00",
		"--address", "TXYZabcdefghijklmnopqrstuvwxyz1234", "--yes", "-o", "json")
	wd := id(t, r)
	e.step("withdrawals_get", 0, "withdrawals", "get", wd)
	e.step("withdrawals_get_csv", 0, "withdrawals", "get", wd, "-o", "csv")
	e.step("withdrawals_fee", 0, "withdrawals", "fee")
	e.step("withdrawals_fee_json", 0, "withdrawals", "fee", "-o", "json")
	terms, err := e.sdk.ListTerminals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 - 100 - 0.5 - (50 + 1.50 fee) + 1500.50 RUB / 92.50 credited by the completed payment.
	if got := terms[0].Balance.String(); got != "864.22" {
		t.Errorf("main terminal balance %s after the session's moves, want 864.22", got)
	}

	// The payments' requisites, for the leak check (before Reset below).
	secrets := []string{testKey, testSecret, testCard, testPhone}
	for _, pid := range []string{pay1, pay2} {
		if p, err := e.sdk.GetPayment(ctx, pid); err == nil && p.Requisites.Value != "" {
			secrets = append(secrets, p.Requisites.Value)
		}
	}

	// Failures and their exit codes.
	e.step("error_not_found", 1, "payments", "get", "--ext-id", "no-such-order")
	e.step("error_usage_output", 2, "balance", "-o", "yaml")
	e.step("error_usage_args", 2, "payments", "get")
	e.step("error_usage_required", 2, "payments", "create", "--amount", "100")
	e.step("error_usage_unknown_command", 2, "refunds", "create")
	e.step("error_usage_amount", 2, "payments", "create", "--ext-id", "x", "--amount", "lots")
	e.step("error_validation", 2, "payments", "get", "not-a-uuid")
	for _, amount := range []string{"1e999999999", "-5", "1.1234567", "0x10", "1,5"} {
		r := e.run("", "transfers", "create", "--from", "a", "--to", "b", "--amount", amount, "--yes")
		if r.code != 2 || !strings.Contains(r.stderr, "want a decimal amount") {
			t.Errorf("--amount %s: exit %d, stderr %q; want 2 before any call", amount, r.code, r.stderr)
		}
	}
	r = e.runEnv(map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": "wrong-secret"}, "", "balance")
	if r.code != 4 || !strings.Contains(r.stderr, "AUTH_001") && !strings.Contains(r.stderr, "unauthorized") {
		t.Errorf("a wrong secret: exit %d, stderr %q; want 4 naming the refusal", r.code, r.stderr)
	}

	// Unknown outcome: the payout's answer is lost and so is every read
	// that could settle it. Exit 3 and the command that settles it.
	if err := e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/payouts", Mode: sandbox.FaultDropAfter}); err != nil {
		t.Fatal(err)
	}
	if err := e.sb.InjectFault(sandbox.Fault{Method: "GET", Path: "/v1/payouts/by-ext-id/{id}", Mode: sandbox.FaultErrorBefore, Count: 100}); err != nil {
		t.Fatal(err)
	}
	e.step("unknown_outcome", 3, "payouts", "create", "--ext-id", "payout-80", "--amount", "10", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes")
	// A transfer has no id to read back: its settling command is the
	// terminals' balances.
	if err := e.sb.InjectFault(sandbox.Fault{Method: "POST", Path: "/v1/transfers", Mode: sandbox.FaultDropAfter}); err != nil {
		t.Fatal(err)
	}
	e.step("unknown_outcome_transfer", 3, "transfers", "create", "--from", sandbox.DefaultMainTerminalID, "--to", sandbox.DefaultReserveTerminalID, "--amount", "1", "--yes")
	e.sb.Reset()

	// -v logs every attempt: part of the session the leak test reads.
	r = e.run("", "-v", "payouts", "create", "--ext-id", "payout-81", "--amount", "10", "--method", "card",
		"--requisites", testCard, "--holder-name", "Ivan Petrov", "--yes")
	if r.code != 0 || r.stderr == "" {
		t.Errorf("-v: exit %d, stderr %q; want 0 and log lines", r.code, r.stderr)
	}

	// The leak check over everything the binary wrote.
	e.mu.Lock()
	all, sigs := e.all.String(), append([]string(nil), e.sigs...)
	e.mu.Unlock()
	if len(sigs) < 40 {
		t.Errorf("only %d signatures recorded: the session did not run", len(sigs))
	}
	for _, s := range append(secrets, sigs...) {
		if s != "" && strings.Contains(all, s) {
			t.Errorf("the session's output contains a secret or full number (%d characters, ending %q)", len(s), s[max(0, len(s)-4):])
		}
	}
	if len(secrets) < 5 {
		t.Errorf("the payments' requisites were not read back for the leak check: %d values", len(secrets))
	}
}

// TestUnmask: --unmask is the one way to see a full number.
func TestUnmask(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "payouts", "create", "--ext-id", "p-1", "--amount", "10", "--method", "card", "--requisites", testCard,
		"--holder-name", "Ivan Petrov", "--yes", "-o", "json", "--unmask")
	if r.code != 0 || !strings.Contains(r.stdout, `"requisites":"`+testCard+`"`) {
		t.Fatalf("--unmask: exit %d, %s", r.code, r.stdout)
	}
	var p paykit.Payout
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.ExtID != "p-1" {
		t.Fatalf("the answer does not decode as a payout: %v", err)
	}
}
