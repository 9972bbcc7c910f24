package autopilot

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/control"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// fakeTarget records every control a step calls, in order, on a clock the
// test sets.
type fakeTarget struct {
	now      time.Time
	calls    []string
	inFlight []InFlight
}

func (f *fakeTarget) Now() time.Time { return f.now }
func (f *fakeTarget) PayerPaid(id string) error {
	f.calls = append(f.calls, "paid "+id)
	return nil
}
func (f *fakeTarget) VerifyPayment(id, outcome string) (any, error) {
	f.calls = append(f.calls, "verify "+id+" "+outcome)
	return nil, nil
}
func (f *fakeTarget) ReviewDispute(id, outcome string) (any, error) {
	f.calls = append(f.calls, "review "+id+" "+outcome)
	return nil, nil
}
func (f *fakeTarget) SetPayoutStatus(id, status string) (any, error) {
	f.calls = append(f.calls, "payout "+id+" "+status)
	return nil, nil
}
func (f *fakeTarget) SetWithdrawalStatus(id, status, txHash string) (any, error) {
	f.calls = append(f.calls, strings.TrimSpace("withdrawal "+id+" "+status+" "+txHash)) // the service makes the tx_hash
	return nil, nil
}

// The verbs a step never calls: a call is recorded, and fails the test's
// comparison of the calls.
func (f *fakeTarget) Advance(time.Duration) (time.Time, error) {
	f.calls = append(f.calls, "advance")
	return f.now, nil
}
func (f *fakeTarget) InjectFault(control.Fault) error { f.calls = append(f.calls, "fault"); return nil }
func (f *fakeTarget) ResendWebhook(string) (any, error) {
	f.calls = append(f.calls, "resend")
	return nil, nil
}
func (f *fakeTarget) Reset() error                            { f.calls = append(f.calls, "reset"); return nil }
func (f *fakeTarget) InFlight(fn func(time.Time, []InFlight)) { fn(f.now, f.inFlight) }

// The pilot acts only through its Target, at the configured delays on the
// Target's clock, in due order, with the outcome the test values choose;
// a step not yet due does not run.
func TestPilotActsThroughTarget(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	f := &fakeTarget{now: t0}
	p := New(f, Config{Enabled: true, VerifyDelay: 3 * time.Second, PayoutDelay: 2 * time.Second}, false)
	p.PaymentEntered(t0, "pm1", ledger.PaymentProcessing, decimal.RequireFromString("1500.12"), "")
	p.PayoutEntered(t0, "po1", ledger.PayoutProcessing, "4000000000000002")
	p.PaymentCreated(t0, "pm2", decimal.RequireFromString("1500.00")) // no test value: nothing scheduled
	if got := p.Pending(); got != 2 {
		t.Fatalf("pending %d, want 2", got)
	}
	p.Run(t0.Add(2*time.Second - 1))
	if len(f.calls) != 0 {
		t.Fatalf("ran early: %v", f.calls)
	}
	p.Run(t0.Add(3 * time.Second))
	want := []string{"payout po1 " + ledger.PayoutFailed, "verify pm1 " + ledger.OutcomeCancelled}
	if !reflect.DeepEqual(f.calls, want) || p.Pending() != 0 {
		t.Fatalf("calls %v (pending %d), want %v", f.calls, p.Pending(), want)
	}
}

// Resume schedules the next step of each resource the Target reports in
// flight, a full delay from the Target's time.
func TestPilotResume(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	f := &fakeTarget{now: t0, inFlight: []InFlight{
		{Kind: "payment", ID: "pm1", Status: ledger.PaymentPending, Amount: decimal.RequireFromString("10.11")},
		{Kind: "payment", ID: "pm2", Status: ledger.PaymentDispute, Comment: "Please REJECT"},
		{Kind: "withdrawal", ID: "w1", Status: ledger.WithdrawalPending, Detail: "TXYZfail"},
	}}
	p := New(f, Config{Enabled: true}, false)
	p.Resume()
	p.Run(t0.Add(DefaultReviewDelay))
	want := []string{"paid pm1", "withdrawal w1 " + ledger.WithdrawalProcessing, "review pm2 " + ledger.OutcomeRejected}
	if !reflect.DeepEqual(f.calls, want) {
		t.Fatalf("calls %v, want %v", f.calls, want)
	}
}

// A nil Pilot is the autopilot off: every call is a no-op, and New returns
// nil when the configuration is not enabled.
func TestNilPilot(t *testing.T) {
	p := New(&fakeTarget{}, Config{PayoutDelay: time.Second}, false)
	if p != nil {
		t.Fatal("a disabled configuration gave a pilot")
	}
	p.PayoutEntered(time.Time{}, "po1", ledger.PayoutPending, "")
	p.Run(time.Time{})
	p.RunDue(time.Time{})
	p.Resume()
	p.Clear()
	p.Close()
	if p.Pending() != 0 || p.RefuseCreate(pay004Amount) != nil || p.Config() != (Config{}) {
		t.Fatal("a nil pilot did something")
	}
}

// The test amount's refusal, as ledger.CreatePayment asks it, is the
// spec's PAY_004 with the Unavailable kind; any other amount passes.
func TestRefuseCreate(t *testing.T) {
	on := New(&fakeTarget{}, Config{Enabled: true}, false)
	err := on.RefuseCreate(decimal.RequireFromString("404.040"))
	if err == nil || err.Kind != ledger.Unavailable || err.Code != spec.CodePAY004 ||
		err.Message != "no requisites available (sandbox test amount 404.04)" {
		t.Fatalf("refusal %+v", err)
	}
	if err := on.RefuseCreate(decimal.RequireFromString("404.05")); err != nil {
		t.Fatalf("another amount refused: %+v", err)
	}
	ignoring := New(&fakeTarget{}, Config{Enabled: true, IgnoreTestValues: true}, false)
	if err := ignoring.RefuseCreate(decimal.RequireFromString("404.04")); err != nil {
		t.Fatalf("refused while ignoring test values: %+v", err)
	}
}

// Every test value's Example reaches its row's outcome, and
// IgnoreTestValues gives every resource its default.
func TestTestValueOutcomes(t *testing.T) {
	on := New(&fakeTarget{}, Config{Enabled: true}, false)
	ignoring := New(&fakeTarget{}, Config{Enabled: true, IgnoreTestValues: true}, false)
	cases := []struct {
		got, want, ignored any
	}{
		{on.paymentOutcome(decimal.RequireFromString("1500.00")), tvDefault, tvDefault},
		{on.paymentOutcome(decimal.RequireFromString("1500.11")), tvPayerConfirms, tvDefault},
		{on.paymentOutcome(decimal.RequireFromString("1500.12")), tvNotFound, tvDefault},
		{on.paymentOutcome(decimal.RequireFromString("1500.13")), tvStaysProcessing, tvDefault},
		{on.paymentOutcome(decimal.RequireFromString("1500.115")), tvDefault, tvDefault},
		{on.RefuseCreate(decimal.RequireFromString("404.04")) != nil, true, false},
		{on.disputeOutcome("receipt attached"), ledger.OutcomeApproved, ledger.OutcomeApproved},
		{on.disputeOutcome("please reject"), ledger.OutcomeRejected, ledger.OutcomeApproved},
		{on.payoutOutcome("4111111111111111"), ledger.PayoutCompleted, ledger.PayoutCompleted},
		{on.payoutOutcome("4000000000000002"), ledger.PayoutFailed, ledger.PayoutCompleted},
		{on.payoutOutcome("4000000000000003"), ledger.PayoutCancelled, ledger.PayoutCompleted},
		{on.withdrawalOutcome("TXYZsandboxAddress"), ledger.WithdrawalCompleted, ledger.WithdrawalCompleted},
		{on.withdrawalOutcome("TXYZsandboxFAIL"), ledger.WithdrawalFailed, ledger.WithdrawalCompleted},
	}
	ign := []any{
		ignoring.paymentOutcome(decimal.RequireFromString("1500.00")),
		ignoring.paymentOutcome(decimal.RequireFromString("1500.11")),
		ignoring.paymentOutcome(decimal.RequireFromString("1500.12")),
		ignoring.paymentOutcome(decimal.RequireFromString("1500.13")),
		ignoring.paymentOutcome(decimal.RequireFromString("1500.115")),
		ignoring.RefuseCreate(decimal.RequireFromString("404.04")) != nil,
		ignoring.disputeOutcome("receipt attached"),
		ignoring.disputeOutcome("please reject"),
		ignoring.payoutOutcome("4111111111111111"),
		ignoring.payoutOutcome("4000000000000002"),
		ignoring.payoutOutcome("4000000000000003"),
		ignoring.withdrawalOutcome("TXYZsandboxAddress"),
		ignoring.withdrawalOutcome("TXYZsandboxFAIL"),
	}
	for i, c := range cases {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("case %d: %v, want %v", i, c.got, c.want)
		}
		if fmt.Sprint(ign[i]) != fmt.Sprint(c.ignored) {
			t.Errorf("case %d ignoring test values: %v, want %v", i, ign[i], c.ignored)
		}
	}
}
