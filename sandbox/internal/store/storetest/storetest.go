// Package storetest checks a store against the semantics ledger.Store
// promises, so that the memory store and the SQL store are held to the
// same ones: the memory store's tests run it without a database driver,
// the sandbox's with its SQLite driver.
package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Opener opens an empty store whose configured merchants start builds,
// and returns it with its merchants (Merchants, committed).
type Opener func(t *testing.T, start func() []*ledger.Merchant) (ledger.Store, map[string]*ledger.Merchant)

// base is the frozen clock of the checks.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// start is one merchant, k1, with one active terminal, t1.
func start() []*ledger.Merchant {
	return []*ledger.Merchant{{APIKey: "k1", Terminals: []*ledger.Terminal{{ID: "t1",
		Balance: ledger.Balance{Available: decimal.RequireFromString("10")}, Active: true}}}}
}

func commit(t *testing.T, st ledger.Store) {
	t.Helper()
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
}

// KeepsOnlyWhatIsSaved checks that a rule that changes a resource and
// forgets to save it loses the change, in memory as on a file, so the
// sandbox's suite in memory catches a forgotten save; that the PENDING
// counter and the expiry follow the saved status only; that a save keeps
// only what the rules move (a payment's status, receipt and dispute, a
// payout's status, provider order id and completion time, a withdrawal's
// status, hash and update time: the columns the SQL store updates), so
// a rule that changes any other field after the add loses the change in
// memory too; and that a saved copy shares nothing with the one a
// transaction changes.
func KeepsOnlyWhatIsSaved(t *testing.T, open Opener) {
	t.Helper()
	st, ms := open(t, start)
	m := ms["k1"]
	amt := decimal.RequireFromString("1500.5")
	p := &ledger.Payment{Merchant: m, Terminal: m.Terminals[0], ID: "p1", ExtID: "e1", Amount: amt, Method: "CARD",
		Status: ledger.PaymentPending, ValidUntil: base.Add(time.Minute), CreatedAt: base}
	st.AddPayment(p)
	p.Holder = "changed after add" // not saved
	st.AddPayout(&ledger.Payout{Merchant: m, ID: "po1", ExtID: "x1", Amount: amt, Status: ledger.PayoutPending, CreatedAt: base})
	st.AddWithdrawal(&ledger.Withdrawal{Merchant: m, Terminal: m.Terminals[0], ID: "w1", Amount: decimal.NewFromInt(1),
		Status: ledger.WithdrawalPending, CreatedAt: base})
	commit(t, st)

	// Changed, never saved.
	got := st.Payment("p1")
	if again := st.PaymentByExt(m, "e1"); again != got {
		t.Fatal("two lookups of one payment in a section are not one copy")
	}
	got.Status = ledger.PaymentCompleted
	got.Dispute = &ledger.Dispute{Comment: "unsaved"}
	st.Payout("po1").Status = ledger.PayoutCompleted
	st.Withdrawal("w1").Status = ledger.WithdrawalCompleted
	commit(t, st)

	check := func(wantPayment, wantPayout, wantWithdrawal string, wantPending int) {
		t.Helper()
		p := st.Payment("p1")
		if p.Status != wantPayment || p.Holder != "" {
			t.Fatalf("payment status %s holder %q, want %s and no holder", p.Status, p.Holder, wantPayment)
		}
		if (p.Dispute != nil) != (wantPayment == ledger.PaymentDispute) {
			t.Fatalf("payment dispute %+v with status %s", p.Dispute, p.Status)
		}
		if s := st.PaymentByExt(m, "e1").Status; s != wantPayment {
			t.Fatalf("payment by ext_id: %s, want %s", s, wantPayment)
		}
		if po := st.Payout("po1"); po.Status != wantPayout || po.HolderName != "" {
			t.Fatalf("payout: %s holder %q, want %s and no holder", po.Status, po.HolderName, wantPayout)
		}
		if l, n := st.ListPayouts(m, ledger.PayoutFilter{}, 10, 0); n != 1 || l[0].Status != wantPayout {
			t.Fatalf("payout list: %d, %+v, want %s", n, l, wantPayout)
		}
		if w := st.Withdrawal("w1"); w.Status != wantWithdrawal || w.Address != "" {
			t.Fatalf("withdrawal: %s address %q, want %s and no address", w.Status, w.Address, wantWithdrawal)
		}
		if n := st.PendingWithAmount(m, ledger.AmountKey(amt)); n != wantPending {
			t.Fatalf("PENDING with the amount: %d, want %d", n, wantPending)
		}
		pm, po, wd := st.Counts(m)
		if pm[wantPayment] != 1 || po[wantPayout] != 1 || wd[wantWithdrawal] != 1 {
			t.Fatalf("counts %v %v %v", pm, po, wd)
		}
		// Without a PENDING payment the SQL store may still name an
		// early time (a lower bound, see pendingUntil); dueExpiry
		// below tells that nothing is due.
		if next, ok := st.NextExpiry(); wantPending == 1 && (!ok || !next.Equal(base.Add(time.Minute))) {
			t.Fatalf("next expiry %v %v, want %v", next, ok, base.Add(time.Minute))
		}
		commit(t, st)
	}
	check(ledger.PaymentPending, ledger.PayoutPending, ledger.WithdrawalPending, 1)

	// Saved, with a field no save writes.
	p = st.Payment("p1")
	p.Status = ledger.PaymentDispute
	p.Dispute = &ledger.Dispute{Comment: "saved"}
	p.Holder = "not a saved field"
	st.SavePayment(p)
	po := st.Payout("po1")
	po.Status = ledger.PayoutProcessing
	po.HolderName = "not a saved field"
	st.SavePayout(po)
	w := st.Withdrawal("w1")
	w.Status = ledger.WithdrawalProcessing
	w.Address = "not a saved field"
	st.SaveWithdrawal(w)
	commit(t, st)
	check(ledger.PaymentDispute, ledger.PayoutProcessing, ledger.WithdrawalProcessing, 0)
	if due := st.DueExpiry(base.Add(time.Hour), 10); len(due) != 0 {
		t.Fatalf("a payment no longer PENDING is due: %+v", due[0])
	}
	commit(t, st)

	// A saved copy shares nothing with the one the section changes.
	p = st.Payment("p1")
	p.Dispute.Comment = "changed in place"
	commit(t, st)
	if c := st.Payment("p1").Dispute.Comment; c != "saved" {
		t.Fatalf("dispute comment %q, want the saved one", c)
	}
	commit(t, st)
}

// ExpiryFollowsSavedStatus checks that the expiry finds a PENDING payment
// whose unsaved change said otherwise, and that both stores hand the due
// payments out in one order, earliest ValidUntil first and ties by id, at
// most the limit at a time: a batch of expiries (and the webhooks they
// send) comes out the same in memory as on a file.
func ExpiryFollowsSavedStatus(t *testing.T, open Opener) {
	t.Helper()
	st, ms := open(t, start)
	m := ms["k1"]
	st.AddPayment(&ledger.Payment{Merchant: m, Terminal: m.Terminals[0], ID: "p1", ExtID: "e1", Amount: decimal.NewFromInt(100),
		Status: ledger.PaymentPending, ValidUntil: base.Add(time.Minute), CreatedAt: base})
	commit(t, st)
	st.Payment("p1").Status = ledger.PaymentCancelled // not saved
	commit(t, st)
	due := st.DueExpiry(base.Add(time.Hour), 10)
	if len(due) != 1 || due[0].ID != "p1" || due[0].Status != ledger.PaymentPending {
		t.Fatalf("due: %+v, want p1 PENDING", due)
	}
	commit(t, st)

	st, ms = open(t, start)
	m = ms["k1"]
	// Added out of order; p5 is not due yet.
	for i, id := range []string{"p4", "p2", "p5", "p1", "p3"} {
		until := base.Add(time.Minute)
		switch id {
		case "p1":
			until = base.Add(2 * time.Minute)
		case "p5":
			until = base.Add(2 * time.Hour)
		}
		st.AddPayment(&ledger.Payment{Merchant: m, Terminal: m.Terminals[0], ID: id, ExtID: "e" + id,
			Amount: decimal.NewFromInt(int64(100 + i)), Status: ledger.PaymentPending, ValidUntil: until, CreatedAt: base})
	}
	commit(t, st)
	var got []string
	for range 3 {
		for _, p := range st.DueExpiry(base.Add(time.Hour), 2) {
			got = append(got, p.ID)
			p.Status = ledger.PaymentCancelled // as the caller moves them
			st.SavePayment(p)
		}
		commit(t, st)
	}
	if want := "p2 p3 p4 p1"; strings.Join(got, " ") != want {
		t.Fatalf("due in batches of 2: %v, want %s", got, want)
	}
	if next, ok := st.NextExpiry(); !ok || next.After(base.Add(2*time.Hour)) {
		t.Fatalf("next expiry %v %v, want at most %v (p5)", next, ok, base.Add(2*time.Hour))
	}
	commit(t, st)
}
