package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/shopspring/decimal"

	paykit "github.com/paykit-dev/paykit-go"
)

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
	var l *PayoutsListOptions
	cmd = newCmdPayoutsList(a, func(_ context.Context, o *PayoutsListOptions) error { l = o; return nil })
	cmd.SetArgs([]string{"--from", "2026-11-01", "--to", "2026-12-01", "--status", "failed", "--all"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if l == nil || l.From != "2026-11-01" || l.To != "2026-12-01" || l.Status != "failed" || !l.All || l.Limit != 0 {
		t.Fatalf("payouts list options: %+v", l)
	}
	var tr *TransfersCreateOptions
	cmd = newCmdTransfersCreate(a, func(_ context.Context, o *TransfersCreateOptions) error { tr = o; return nil })
	cmd.SetArgs([]string{"--from", "a", "--to", "b", "--amount", "1.5", "--yes"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if tr == nil || tr.Params.FromTerminalID != "a" || tr.Params.ToTerminalID != "b" || tr.Amount != "1.5" || !a.yes {
		t.Fatalf("transfers create options: %+v", tr)
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
