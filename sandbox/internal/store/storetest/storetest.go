// Package storetest checks a store against the semantics ledger.Txn
// promises, so that the memory store and the SQL store are held to the
// same ones: the memory store's tests run it without a database driver,
// the sandbox's with its SQLite driver.
package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Opener opens an empty store whose configured merchants start builds
// (committed).
type Opener func(t *testing.T, start func() []*ledger.Merchant) ledger.Txn

// merchantsOf is the open transaction's copies of the merchants keys.
func merchantsOf(st ledger.Txn, keys ...string) map[string]*ledger.Merchant {
	out := map[string]*ledger.Merchant{}
	for _, k := range keys {
		if m := st.Merchant(k); m != nil {
			out[k] = m
		}
	}
	return out
}

// base is the frozen clock of the checks.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// start is one merchant, k1, with one active terminal, t1.
func start() []*ledger.Merchant {
	return []*ledger.Merchant{{APIKey: "k1", Terminals: []*ledger.Terminal{{ID: "t1",
		Balance: ledger.Balance{Available: decimal.RequireFromString("10")}, Active: true}}}}
}

func commit(t *testing.T, st ledger.Txn) {
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
	st := open(t, start)
	m := st.Merchant("k1")
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
	disputed := decimal.RequireFromString("1400.50")
	p.Dispute = &ledger.Dispute{Comment: "saved", Amount: &disputed}
	p.Holder = "not a saved field"
	st.SavePayment(p)
	p.Dispute.Comment = "changed after the save" // not saved again
	disputed = decimal.NewFromInt(1)
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

	// A saved copy shares nothing with the one the section changes, nor
	// with the one it saved: not the dispute, nor its amount.
	p = st.Payment("p1")
	if d := p.Dispute; d.Comment != "saved" || d.Amount == nil || !d.Amount.Equal(decimal.RequireFromString("1400.5")) {
		t.Fatalf("dispute %+v, want the saved comment and amount 1400.50", d)
	}
	p.Dispute.Comment = "changed in place"
	*p.Dispute.Amount = decimal.NewFromInt(2)
	commit(t, st)
	if d := st.Payment("p1").Dispute; d.Comment != "saved" || !d.Amount.Equal(decimal.RequireFromString("1400.5")) {
		t.Fatalf("dispute comment %q amount %s, want the saved ones", d.Comment, d.Amount)
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
	st := open(t, start)
	m := st.Merchant("k1")
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

	st = open(t, start)
	m = st.Merchant("k1")
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

// QueriesAgree checks the queries a store answers from many rows (the
// recent lists and their ties, the payout list's filters, bounds and
// page, the counts, what is in flight, the PENDING count, and a reset)
// against one expected answer, so that memory and a file answer them
// alike: the dashboard, GET /v1/payouts and the autopilot see one
// sandbox whichever store runs it.
func QueriesAgree(t *testing.T, open Opener) {
	t.Helper()
	st := open(t, func() []*ledger.Merchant {
		return append(start(), &ledger.Merchant{APIKey: "k2", Terminals: []*ledger.Terminal{{ID: "t2", Active: true}}})
	})
	k1, k2 := st.Merchant("k1"), st.Merchant("k2")
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	hundred := decimal.RequireFromString("100")
	for _, p := range []struct {
		m          *ledger.Merchant
		id, ext    string
		amount     string
		status     string
		createdSec int
	}{
		{k1, "pa", "e2", "100", ledger.PaymentPending, 0},
		{k1, "pb", "e1", "100", ledger.PaymentCompleted, 0},
		{k1, "pc", "e3", "200", ledger.PaymentProcessing, 1},
		{k1, "pd", "e0", "100", ledger.PaymentDispute, -1},
		{k2, "pe", "e1", "100", ledger.PaymentPending, 2},
	} {
		st.AddPayment(&ledger.Payment{Merchant: p.m, Terminal: p.m.Terminals[0], ID: p.id, ExtID: p.ext,
			Amount: decimal.RequireFromString(p.amount), Status: p.status, CreatedAt: at(p.createdSec),
			ValidUntil: at(p.createdSec).Add(time.Hour)})
	}
	for _, p := range []struct {
		m          *ledger.Merchant
		id, status string
		createdSec int
	}{
		{k1, "o1", ledger.PayoutPending, 0},
		{k1, "o2", ledger.PayoutCompleted, 1},
		{k1, "o3", ledger.PayoutProcessing, 2},
		{k2, "o4", ledger.PayoutPending, 1},
	} {
		st.AddPayout(&ledger.Payout{Merchant: p.m, ID: p.id, ExtID: "x" + p.id, Amount: hundred, Status: p.status,
			CreatedAt: at(p.createdSec)})
	}
	for _, w := range []struct {
		m          *ledger.Merchant
		id, status string
		createdSec int
	}{
		{k1, "w2", ledger.WithdrawalPending, 0},
		{k1, "w1", ledger.WithdrawalCompleted, 0},
		{k1, "w3", ledger.WithdrawalProcessing, 1},
		{k2, "w4", ledger.WithdrawalPending, -1},
	} {
		st.AddWithdrawal(&ledger.Withdrawal{Merchant: w.m, Terminal: w.m.Terminals[0], ID: w.id, Amount: hundred,
			Status: w.status, CreatedAt: at(w.createdSec), UpdatedAt: at(w.createdSec)})
	}
	commit(t, st)

	eq := func(what string, got []string, want string) {
		t.Helper()
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %s", what, got, want)
		}
	}
	// Newest first; a tie by ext_id, then id.
	eq("recent payments", ids(st.RecentPayments(3), func(p *ledger.Payment) string { return p.ID }), "pe pc pb")
	eq("all recent payments", ids(st.RecentPayments(10), func(p *ledger.Payment) string { return p.ID }), "pe pc pb pa pd")
	// Newest created first.
	eq("recent payouts", ids(st.RecentPayouts(2), payoutID), "o4 o3")
	// Newest first; a tie by id.
	eq("recent withdrawals", ids(st.RecentWithdrawals(3), func(w *ledger.Withdrawal) string { return w.ID }), "w3 w1 w2")

	far := func(y int) time.Time { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		name          string
		f             ledger.PayoutFilter
		limit, offset int
		want          string
		total         int
	}{
		{"all", ledger.PayoutFilter{}, 10, 0, "o1 o2 o3", 3},
		{"page", ledger.PayoutFilter{}, 1, 1, "o2", 3},
		{"past the end", ledger.PayoutFilter{}, 10, 3, "", 3},
		{"no rows asked", ledger.PayoutFilter{}, 0, 0, "", 3},
		{"status", ledger.PayoutFilter{Status: ledger.PayoutPending}, 10, 0, "o1", 1},
		{"bounds included", ledger.PayoutFilter{From: at(1), To: at(2)}, 10, 0, "o2 o3", 2},
		{"to only", ledger.PayoutFilter{To: at(1)}, 10, 0, "o1 o2", 2},
		{"from only", ledger.PayoutFilter{From: at(2)}, 10, 0, "o3", 1},
		// Dates an int64 of nanoseconds cannot hold (before 1678, after
		// 2262) still bound nothing, or everything.
		{"far bounds", ledger.PayoutFilter{From: far(1000), To: far(9999)}, 10, 0, "o1 o2 o3", 3},
		{"far future from", ledger.PayoutFilter{From: far(9999)}, 10, 0, "", 0},
		{"far past to", ledger.PayoutFilter{To: far(1000)}, 10, 0, "", 0},
	} {
		l, n := st.ListPayouts(k1, c.f, c.limit, c.offset)
		eq("payout list "+c.name, ids(l, payoutID), c.want)
		if n != c.total {
			t.Errorf("payout list %s: total %d, want %d", c.name, n, c.total)
		}
	}

	pm, po, wd := st.Counts(k1)
	for _, c := range []struct {
		what      string
		got, want map[string]int
	}{
		{"payments", pm, map[string]int{ledger.PaymentPending: 1, ledger.PaymentCompleted: 1, ledger.PaymentProcessing: 1,
			ledger.PaymentDispute: 1}},
		{"payouts", po, map[string]int{ledger.PayoutPending: 1, ledger.PayoutCompleted: 1, ledger.PayoutProcessing: 1}},
		{"withdrawals", wd, map[string]int{ledger.WithdrawalPending: 1, ledger.WithdrawalCompleted: 1,
			ledger.WithdrawalProcessing: 1}},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("counts of k1's %s: %v, want %v", c.what, c.got, c.want)
		}
	}
	for _, c := range []struct {
		m    *ledger.Merchant
		key  string
		want int
	}{{k1, "100", 1}, {k2, "100", 1}, {k1, "200", 0}} {
		if n := st.PendingWithAmount(c.m, c.key); n != c.want {
			t.Errorf("PENDING of %s with %s: %d, want %d", c.m.APIKey, c.key, n, c.want)
		}
	}
	// In creation order: the autopilot resumes them in that order.
	ip, io, iw := st.InFlight()
	eq("in-flight payments", ids(ip, func(p *ledger.Payment) string { return p.ID }), "pd pa pc pe")
	eq("in-flight payouts", ids(io, payoutID), "o1 o3 o4")
	eq("in-flight withdrawals", ids(iw, func(w *ledger.Withdrawal) string { return w.ID }), "w4 w2 w3")
	commit(t, st)

	st.Reset()
	commit(t, st)
	ms := merchantsOf(st, "k1", "k2")
	if len(ms) != 2 || ms["k1"] == nil || ms["k2"] == nil {
		t.Fatalf("merchants after reset: %v", ms)
	}
	if p := st.Payment("pa"); p != nil {
		t.Errorf("payment after reset: %+v", p)
	}
	if n := len(st.RecentPayments(10)) + len(st.RecentPayouts(10)) + len(st.RecentWithdrawals(10)); n != 0 {
		t.Errorf("%d resources listed after reset", n)
	}
	if pm, po, wd := st.Counts(ms["k1"]); len(pm)+len(po)+len(wd) != 0 {
		t.Errorf("counts after reset: %v %v %v", pm, po, wd)
	}
	if ip, io, iw := st.InFlight(); len(ip)+len(io)+len(iw) != 0 {
		t.Errorf("in flight after reset: %d %d %d", len(ip), len(io), len(iw))
	}
	if n := st.PendingWithAmount(ms["k1"], "100"); n != 0 {
		t.Errorf("PENDING with 100 after reset: %d", n)
	}
	if next, ok := st.NextExpiry(); ok {
		t.Errorf("next expiry after reset: %v", next)
	}
	if due := st.DueExpiry(at(0).Add(24*time.Hour), 10); len(due) != 0 {
		t.Errorf("due after reset: %d", len(due))
	}
	commit(t, st)
}

func payoutID(p *ledger.Payout) string { return p.ID }

func ids[T any](s []*T, id func(*T) string) []string {
	out := []string{}
	for _, v := range s {
		out = append(out, id(v))
	}
	return out
}

// MerchantsKeepOnlyWhatIsSaved checks that the merchants, their terminals'
// balances and their transfer counters are resources like the others: a
// transaction reads one copy of each (its payments' terminals are that
// copy's), keeps only what it saves, and a rolled back one keeps nothing.
func MerchantsKeepOnlyWhatIsSaved(t *testing.T, open Opener) {
	t.Helper()
	st := open(t, start)
	if st.Merchant("nobody") != nil {
		t.Fatal("a merchant that is not configured was found")
	}
	m := st.Merchant("k1")
	if m2 := st.Merchant("k1"); m2 != m || m2.Terminals[0] != m.Terminals[0] {
		t.Fatal("two reads of one merchant in a transaction gave two copies")
	}
	st.AddPayment(&ledger.Payment{Merchant: m, Terminal: m.Terminals[0], ID: "p1", ExtID: "e1",
		Amount: decimal.NewFromInt(100), Method: "CARD", Status: ledger.PaymentPending, ValidUntil: base.Add(time.Hour), CreatedAt: base})
	m.Terminals[0].Available = decimal.RequireFromString("25")
	st.SaveTerminal(m, m.Terminals[0])
	m.Terminals[0].Frozen = decimal.RequireFromString("1") // after the save: not kept
	m.Transfers = 7                                        // not saved
	commit(t, st)
	m = st.Merchant("k1")
	if got, frz := m.Terminals[0].Available.String(), m.Terminals[0].Frozen; got != "25" || !frz.IsZero() {
		t.Errorf("saved balance: %s frozen %s, want 25 and 0 (what the save kept)", got, frz)
	}
	if m.Transfers != 0 {
		t.Errorf("a counter never saved was kept: %d", m.Transfers)
	}
	if p := st.Payment("p1"); p == nil || p.Merchant != m || p.Terminal != m.Terminals[0] {
		t.Error("a payment's merchant and terminal are not the transaction's copies")
	}
	m.Transfers = 3
	st.SaveMerchant(m)
	commit(t, st)
	m = st.Merchant("k1")
	if m.Transfers != 3 {
		t.Errorf("saved counter: %d, want 3", m.Transfers)
	}
	m.Terminals[0].Available = decimal.RequireFromString("99")
	st.SaveTerminal(m, m.Terminals[0])
	m.Transfers = 4
	st.SaveMerchant(m)
	st.Rollback()
	m = st.Merchant("k1")
	if got := m.Terminals[0].Available.String(); got != "25" || m.Transfers != 3 {
		t.Errorf("after a rollback: balance %s, transfers %d; want 25 and 3", got, m.Transfers)
	}
	commit(t, st)
}

// ValuesFollowTheTransaction checks the sandbox's own state kept beside
// the resources (store.Store's Value and SetValue: the clock offset, the
// armed faults): a set value is seen by its transaction, kept by its
// commit, and dropped by a rollback, so a failed commit leaves the last
// committed clock and faults.
func ValuesFollowTheTransaction(t *testing.T, open Opener) {
	t.Helper()
	st, ok := open(t, start).(interface {
		ledger.Txn
		Value(key string) any
		SetValue(key string, x any)
	})
	if !ok {
		t.Fatal("the store keeps no values")
	}
	if v := st.Value("offset"); v != nil {
		t.Fatalf("a value never set: %v", v)
	}
	st.SetValue("offset", time.Minute)
	if v := st.Value("offset"); v != time.Minute {
		t.Fatalf("the transaction does not see its value: %v", v)
	}
	commit(t, st)
	st.SetValue("offset", time.Hour)
	st.Rollback()
	if v := st.Value("offset"); v != time.Minute {
		t.Fatalf("after a rollback: %v, want the committed 1m", v)
	}
	commit(t, st)
}
