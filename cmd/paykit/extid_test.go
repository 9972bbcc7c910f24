package main

import (
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
