package ledger

import (
	"strings"
	"testing"
	"time"
)

// Every pair of statuses: the table's rows move and record the provider's
// order id and the completion time as they say (an order id once, never
// replaced), every other pair is refused and touches nothing.
func TestMovePayout(t *testing.T) {
	statuses := []string{PayoutPending, PayoutProcessing, PayoutCompleted, PayoutFailed, PayoutCancelled, "paid", ""}
	now := time.Date(2026, 3, 1, 12, 0, 0, 700, time.UTC)
	type rec struct{ order, complete bool }
	want := map[[2]string]rec{
		{PayoutPending, PayoutProcessing}:   {order: true},
		{PayoutPending, PayoutCompleted}:    {order: true, complete: true},
		{PayoutPending, PayoutFailed}:       {},
		{PayoutPending, PayoutCancelled}:    {},
		{PayoutProcessing, PayoutCompleted}: {order: true, complete: true},
		{PayoutProcessing, PayoutFailed}:    {},
		{PayoutProcessing, PayoutCancelled}: {},
	}
	for _, from := range statuses {
		for _, to := range statuses {
			what := from + "->" + to
			p := Payout{ID: "po1", Status: from}
			err := MovePayout(&p, to, now)
			if r, ok := want[[2]string{from, to}]; ok {
				if err != nil || p.Status != to {
					t.Fatalf("%s: %v, status %s", what, err, p.Status)
				}
				if r.order != strings.HasPrefix(p.ProviderOrderID, "prv_") || r.order && len(p.ProviderOrderID) != 20 {
					t.Fatalf("%s: provider order id %q", what, p.ProviderOrderID)
				}
				if r.complete != p.CompletedAt.Equal(now.Truncate(time.Second)) {
					t.Fatalf("%s: completed at %v", what, p.CompletedAt)
				}
				continue
			}
			switch to {
			case PayoutProcessing, PayoutCompleted, PayoutFailed, PayoutCancelled:
				wantErr(t, what, err, WrongState, "", "")
				if !strings.Contains(err.Message, "po1 is "+from+", cannot become "+to) {
					t.Fatalf("%s: message %q", what, err.Message)
				}
			default:
				wantErr(t, what, err, Invalid, "", "status")
			}
			if p != (Payout{ID: "po1", Status: from}) {
				t.Fatalf("%s: refused, yet %+v", what, p)
			}
		}
	}
	// The order id given on entering processing stays on completion.
	p := Payout{ID: "po1", Status: PayoutPending}
	if err := MovePayout(&p, PayoutProcessing, now); err != nil {
		t.Fatal(err)
	}
	id := p.ProviderOrderID
	if err := MovePayout(&p, PayoutCompleted, now); err != nil || p.ProviderOrderID != id {
		t.Fatalf("completion: %v, order id %q, was %q", err, p.ProviderOrderID, id)
	}
	got := strings.Join(PayoutMoves(PayoutPending), ",") + ";" + strings.Join(PayoutMoves(PayoutProcessing), ",") +
		";" + strings.Join(PayoutMoves(PayoutCompleted), ",")
	if got != "processing,completed,failed,cancelled;completed,failed,cancelled;" {
		t.Fatalf("PayoutMoves: %s", got)
	}
}
