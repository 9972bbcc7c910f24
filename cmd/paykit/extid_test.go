package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

// TestExtIDEverywhere: payments get/confirm/cancel, disputes open/cancel
// and wait payment|payout take --ext-id instead of the id, and act on the
// payment or payout it names.
func TestExtIDEverywhere(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	mk := func(ext string) *paykit.Payment {
		p, err := e.sdk.CreatePayment(ctx, paykit.CreatePaymentParams{ExtID: ext, Amount: decimal.RequireFromString("300.00")})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	status := func(id string) paykit.PaymentStatus {
		p, err := e.sdk.GetPayment(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return p.Status
	}
	a, b := mk("ext-a"), mk("ext-b")
	for _, c := range []struct {
		args []string
		id   string
		want paykit.PaymentStatus
	}{
		{[]string{"payments", "confirm", "--ext-id", "ext-a"}, a.ID, paykit.PaymentStatusProcessing},
		{[]string{"payments", "cancel", "--ext-id", "ext-b"}, b.ID, paykit.PaymentStatusCancelled},
		{[]string{"disputes", "open", "--ext-id", "ext-b", "--comment", "paid late"}, b.ID, paykit.PaymentStatusDispute},
		{[]string{"disputes", "cancel", "--ext-id", "ext-b"}, b.ID, paykit.PaymentStatusCancelledAppeal},
	} {
		r := e.run("", append(c.args, "-o", "json")...)
		if r.code != 0 || id(t, r) != c.id || status(c.id) != c.want {
			t.Fatalf("paykit %v: exit %d, %q %q; status %s, want %s", c.args, r.code, r.stdout, r.stderr, status(c.id), c.want)
		}
	}
	r := e.run("", "payments", "cancel", "--ext-id", "no-such")
	if r.code != 1 || !strings.Contains(r.stderr, "payment with ext_id no-such: PAY_006") {
		t.Fatalf("--ext-id of no payment: exit %d, %q", r.code, r.stderr)
	}
	if r := e.run("", "payments", "cancel", a.ID, "--ext-id", "ext-a"); r.code != 2 {
		t.Fatalf("an id and --ext-id: exit %d", r.code)
	}
	if err := e.sb.VerifyPayment(a.ID, "completed"); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "wait", "payment", "--ext-id", "ext-a", "-o", "json"); r.code != 0 || id(t, r) != a.ID {
		t.Fatalf("wait payment --ext-id: exit %d, %q", r.code, r.stderr)
	}
	po, err := e.sdk.CreatePayout(ctx, paykit.CreatePayoutParams{ExtID: "po-x", Amount: decimal.RequireFromString("10"), Method: paykit.PayoutMethodCard,
		Requisites: testCard, HolderName: "I P"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.SetPayoutStatus(po.ID, "completed"); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "wait", "payout", "--ext-id", "po-x", "-o", "json"); r.code != 0 || id(t, r) != po.ID {
		t.Fatalf("wait payout --ext-id: exit %d, %q", r.code, r.stderr)
	}
	if r := e.run("", "wait", "withdrawal", "--ext-id", "w"); r.code != 2 || !strings.Contains(r.stderr, "a withdrawal has no ext_id") {
		t.Fatalf("wait withdrawal --ext-id: exit %d, %q", r.code, r.stderr)
	}
}

// TestDuplicateExtIDShowsCommand: PAY_003 on a create prints the command
// that shows the payment or payout holding the ext_id.
func TestDuplicateExtIDShowsCommand(t *testing.T) {
	e := newEnv(t)
	args := []string{"payouts", "create", "--ext-id", "dup 1", "--amount", "10", "--method", "card", "--requisites", testCard, "--holder-name", "I P", "--yes"}
	if r := e.run("", args...); r.code != 0 {
		t.Fatal(r.stderr)
	}
	args[5] = "11"
	r := e.run("", args...)
	if r.code != 1 || !strings.Contains(r.stderr, "PAY_003") || !strings.HasSuffix(r.stderr, "It exists already; show it with:\n  paykit payouts get --ext-id 'dup 1'\n") {
		t.Fatalf("payout PAY_003: exit %d, %q", r.code, r.stderr)
	}
	if r := e.run("", "payments", "create", "--ext-id", "o-1", "--amount", "100"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r = e.run("", "payments", "create", "--ext-id", "o-1", "--amount", "200")
	if r.code != 1 || !strings.HasSuffix(r.stderr, "show it with:\n  paykit payments get --ext-id o-1\n") {
		t.Fatalf("payment PAY_003: exit %d, %q", r.code, r.stderr)
	}
}

// TestNewCmdParsesIntoOptions: each verb's constructor fills its options
// from the command line and hands them to runF; nothing runs and nothing
// is sent (gh's pattern: the flags are tested without the binary).
func TestNewCmdParsesIntoOptions(t *testing.T) {
	a := &app{env: &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false }}}
	var got *DisputesOpenOptions
	cmd := newCmdDisputesOpen(a, func(_ context.Context, o *DisputesOpenOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--ext-id", "order-1", "--amount", "300.00", "--comment", "late"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Ref != (paymentRef{ExtID: "order-1"}) || got.Amount != "300.00" || got.Comment != "late" || got.ReceiptURL != "" {
		t.Fatalf("disputes open options: %+v", got)
	}
	var w *WaitOptions
	cmd = newCmdWait(a, func(_ context.Context, o *WaitOptions) error { w = o; return nil })
	cmd.SetArgs([]string{"payout", "--ext-id", "p-1", "--interval", "2s", "--exit-status"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if w == nil || w.Kind != "payout" || w.ExtID != "p-1" || w.ID != "" || w.Interval.String() != "2s" || !w.ExitStatus {
		t.Fatalf("wait options: %+v", w)
	}
	var c *PaymentsConfirmOptions
	cmd = newCmdPaymentsConfirm(a, func(_ context.Context, o *PaymentsConfirmOptions) error { c = o; return nil })
	cmd.SetArgs([]string{"3f0c", "--receipt", "r.png"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if c == nil || c.Ref != (paymentRef{ID: "3f0c"}) || c.Receipt != "r.png" {
		t.Fatalf("payments confirm options: %+v", c)
	}
}

// TestRunWithoutBinary: a verb's run function works in this process
// against a sandbox, output captured.
func TestRunWithoutBinary(t *testing.T) {
	e := newEnv(t)
	if _, err := e.sdk.CreatePayment(context.Background(), paykit.CreatePaymentParams{ExtID: "in-proc", Amount: decimal.RequireFromString("300.00")}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	vars := map[string]string{"PAYKIT_BASE_URL": e.srv.URL, "PAYKIT_API_KEY": testKey, "PAYKIT_SECRET": testSecret, "PAYKIT_CONFIG": "/nonexistent/x"}
	a := &app{output: "csv", out: &out, env: &env{stdout: &out, stderr: &bytes.Buffer{}, getenv: func(k string) string { return vars[k] },
		isTerminal: func(any) bool { return false }}}
	if err := runPaymentsCancel(context.Background(), &PaymentsCancelOptions{app: a, Ref: paymentRef{ExtID: "in-proc"}}); err != nil {
		t.Fatal(err)
	}
	rows := readCSV(t, "cancel", out.String())
	if len(rows) != 1 || rows[0]["ext_id"] != "in-proc" || rows[0]["status"] != "CANCELLED" {
		t.Fatalf("runPaymentsCancel: %q", out.String())
	}
}
