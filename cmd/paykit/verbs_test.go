package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	paykit "github.com/paykit-dev/paykit-go"
)

// TestNewCmdParsesIntoOptions: each verb's constructor fills its options
// from the command line and hands them to runF; nothing runs and nothing
// is sent (gh's pattern: the flags are tested without the binary).
func TestNewCmdParsesIntoOptions(t *testing.T) {
	a := &app{env: &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }, isTerminal: func(any) bool { return false }}}
	got := parsed(t, a, newCmdDisputesOpen, "--ext-id", "order-1", "--amount", "300.00", "--comment", "late")
	if got == nil || got.Ref != (paymentRef{ExtID: "order-1"}) || got.Amount != "300.00" || got.Comment != "late" || got.ReceiptURL != "" {
		t.Fatalf("disputes open options: %+v", got)
	}
	w := parsed(t, a, newCmdWait, "payout", "--ext-id", "p-1", "--interval", "2s", "--exit-status")
	if w == nil || w.Kind != "payout" || w.ExtID != "p-1" || w.ID != "" || w.Interval.String() != "2s" || !w.ExitStatus {
		t.Fatalf("wait options: %+v", w)
	}
	c := parsed(t, a, newCmdPaymentsConfirm, "3f0c", "--receipt", "r.png")
	if c == nil || c.Ref != (paymentRef{ID: "3f0c"}) || c.Receipt != "r.png" {
		t.Fatalf("payments confirm options: %+v", c)
	}
	l := parsed(t, a, newCmdPayoutsList, "--from", "2026-11-01", "--to", "2026-12-01", "--status", "failed", "--all")
	if l == nil || l.From != "2026-11-01" || l.To != "2026-12-01" || l.Status != "failed" || !l.All || l.Limit != 0 {
		t.Fatalf("payouts list options: %+v", l)
	}
	tr := parsed(t, a, newCmdTransfersCreate, "--from", "a", "--to", "b", "--amount", "1.5", "--yes")
	if tr == nil || tr.Params.FromTerminalID != "a" || tr.Params.ToTerminalID != "b" || tr.Amount != "1.5" || !a.yes {
		t.Fatalf("transfers create options: %+v", tr)
	}
}

// parsed runs the command newCmd builds with args, a runF in place of the
// work, and returns the options runF was given: nil when it was not
// called.
func parsed[O any](t *testing.T, a *app, newCmd func(*app, func(context.Context, *O) error) *cobra.Command, args ...string) *O {
	t.Helper()
	var got *O
	cmd := newCmd(a, func(_ context.Context, o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return got
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
