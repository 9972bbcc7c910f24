package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func noEnv(string) string { return "" }

// TestQuickstartSandbox runs the quickstart as `go run ./examples/quickstart`
// does, and checks the end state it reports against figures computed here.
func TestQuickstartSandbox(t *testing.T) {
	var out bytes.Buffer
	res, err := run(testContext(t), &out, noEnv)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !res.Sandbox {
		t.Fatal("Result.Sandbox = false without configuration")
	}
	mainID, reserve := sandbox.DefaultMainTerminalID, sandbox.DefaultReserveTerminalID

	// The CARD payment completed, and its COMPLETED notification arrived once.
	p := res.Payment
	if p.Status != paykit.PaymentStatusCompleted {
		t.Errorf("payment status = %s, want COMPLETED", p.Status)
	}
	if !p.Amount.Equal(decimal.RequireFromString("1500.50")) {
		t.Errorf("payment amount = %s, want 1500.50", p.Amount)
	}
	if n := countWebhooks(res, "payment", p.ID, string(paykit.PaymentStatusCompleted)); n != 1 {
		t.Errorf("COMPLETED webhooks for the payment = %d, want exactly 1 (all: %+v)", n, res.Webhooks)
	}

	// The main terminal was credited amount / usdt_rate, rounded half up to
	// 2 places; nothing else moved.
	if !p.USDTRate.Equal(sandbox.DefaultUSDTRate) {
		t.Errorf("usdt_rate = %s, want %s", p.USDTRate, sandbox.DefaultUSDTRate)
	}
	credit := decimal.RequireFromString("1500.50").Div(sandbox.DefaultUSDTRate).Round(2)
	if !credit.Equal(decimal.RequireFromString("16.22")) {
		t.Fatalf("test arithmetic: credit = %s", credit)
	}
	wantBalance(t, "credited", res.Credited, mainID, res.Start[mainID].Balance.Add(credit), decimal.Zero)
	wantBalance(t, "credited", res.Credited, reserve, res.Start[reserve].Balance, decimal.Zero)

	// The transfer moved 10.00 from main to reserve.
	ten := decimal.RequireFromString("10.00")
	if tr := res.Transfer; tr == nil || !tr.Success || tr.FromTerminalID != mainID || tr.ToTerminalID != reserve || !tr.Amount.Equal(ten) {
		t.Errorf("transfer = %+v", tr)
	}
	wantBalance(t, "transferred", res.Transferred, mainID, res.Credited[mainID].Balance.Sub(ten), decimal.Zero)
	wantBalance(t, "transferred", res.Transferred, reserve, res.Credited[reserve].Balance.Add(ten), decimal.Zero)

	// The withdrawal of 5.00 with subtract_fee_from_amount is pending and
	// freezes only the amount (the sandbox docs: the fee comes out of it).
	five := decimal.RequireFromString("5.00")
	w := res.Withdrawal
	if w == nil || res.WithdrawalTerminal != reserve {
		t.Fatalf("withdrawal = %+v from %q", w, res.WithdrawalTerminal)
	}
	if w.Status != paykit.WithdrawalStatusPending || !w.Amount.Equal(five) || !w.Fee.Equal(res.Start[reserve].WithdrawalFee) {
		t.Errorf("withdrawal = %s %s fee %s, want pending 5.00 fee %s", w.Status, w.Amount, w.Fee, res.Start[reserve].WithdrawalFee)
	}
	wantBalance(t, "withdrawn", res.Withdrawn, reserve, res.Transferred[reserve].Balance.Sub(five), five)
	wantBalance(t, "withdrawn", res.Withdrawn, mainID, res.Transferred[mainID].Balance, decimal.Zero)

	// The rest of the flow.
	if x := res.CrossBorder; x.Status != paykit.PaymentStatusCancelledAppeal {
		t.Errorf("cross-border payment = %s, want CANCELLED_APPEAL", x.Status)
	}
	if len(res.Payouts) != 1 || res.Payouts[0].Status != paykit.PayoutStatusCompleted {
		t.Fatalf("payouts = %+v", res.Payouts)
	}
	if n := countWebhooks(res, "payout", res.Payouts[0].ID, string(paykit.PayoutStatusCompleted)); n != 1 {
		t.Errorf("completed webhooks for the payout = %d, want 1", n)
	}
	if res.DuplicateErr == nil {
		t.Error("no duplicate ext_id error")
	}

	noSecrets(t, out.String(), p.Requisites.Value, res.CrossBorder.Requisites.Value, sandboxPayoutCard)
}

// TestQuickstartService points the quickstart at a service through the
// environment (here a sandbox it does not control): the sandbox-only steps
// and the payout are skipped with a note, the rest runs.
func TestQuickstartService(t *testing.T) {
	sb := sandbox.New(sandbox.Config{})
	t.Cleanup(sb.Close)
	ts := httptest.NewServer(sb)
	t.Cleanup(ts.Close)
	env := map[string]string{
		"PAYKIT_BASE_URL":           ts.URL,
		"PAYKIT_API_KEY":            sandbox.DefaultAPIKey,
		"PAYKIT_SECRET":             sandbox.DefaultSecret,
		"PAYKIT_WITHDRAWAL_ADDRESS": "TServiceTestWallet",
	}
	var out bytes.Buffer
	res, err := run(testContext(t), &out, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if res.Sandbox {
		t.Error("Result.Sandbox = true with PAYKIT_BASE_URL set")
	}
	if res.Payment.Status != paykit.PaymentStatusProcessing {
		t.Errorf("payment = %s, want PROCESSING (nobody verifies it)", res.Payment.Status)
	}
	if len(res.Webhooks) != 0 || len(res.Payouts) != 0 {
		t.Errorf("webhooks %v, payouts %v: want none", res.Webhooks, res.Payouts)
	}
	for _, note := range []string{"webhooks skipped", "the service verifies on its own", "set PAYKIT_PAYOUT_CARD"} {
		if !strings.Contains(out.String(), note) {
			t.Errorf("output lacks the note %q", note)
		}
	}
	if res.Withdrawal == nil || res.Transfer == nil {
		t.Fatalf("transfer %v, withdrawal %v: want both", res.Transfer, res.Withdrawal)
	}
	// Exactly the two payments were created: the duplicate was refused and
	// the 50 RUB one never sent.
	if st := sb.Stats(sandbox.DefaultAPIKey); st.Payments != 2 || st.Payouts != 0 || st.Transfers != 1 || st.Withdrawals != 1 {
		t.Errorf("sandbox stats = %+v", st)
	}
	noSecrets(t, out.String(), res.Payment.Requisites.Value, res.CrossBorder.Requisites.Value)
}

func TestQuickstartPartialConfig(t *testing.T) {
	var out bytes.Buffer
	_, err := run(testContext(t), &out, func(k string) string {
		if k == "PAYKIT_BASE_URL" {
			return "https://api.example.com"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "PAYKIT_API_KEY") {
		t.Fatalf("err = %v, want one naming the missing variables", err)
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"2200700000000004": "****0004",
		"+992 93 123 4567": "****4567",
		"123":              "****",
		"":                 "****",
	} {
		if got := mask(in); got != want {
			t.Errorf("mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func countWebhooks(res *Result, kind, id, status string) int {
	n := 0
	for _, d := range res.Webhooks {
		if d.Kind == kind && d.ID == id && d.Status == status {
			n++
		}
	}
	return n
}

func wantBalance(t *testing.T, when string, m map[string]paykit.Terminal, id string, balance, frozen decimal.Decimal) {
	t.Helper()
	got, ok := m[id]
	if !ok {
		t.Errorf("%s: no terminal %s", when, id)
		return
	}
	if !got.Balance.Equal(balance) || !got.BalanceFrozen.Equal(frozen) {
		t.Errorf("%s: %s balance %s frozen %s, want %s frozen %s", when, id, got.Balance, got.BalanceFrozen, balance, frozen)
	}
}

// noSecrets checks that the output shows neither the credentials nor a full
// card or phone number.
func noSecrets(t *testing.T, out string, numbers ...string) {
	t.Helper()
	for _, s := range append([]string{sandbox.DefaultAPIKey, sandbox.DefaultSecret}, numbers...) {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("output contains %q:\n%s", s, out)
		}
	}
}
