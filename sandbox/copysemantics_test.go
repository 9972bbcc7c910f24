package sandbox

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// storesUnderTest opens each store on one merchant with one terminal: the
// memory one always, the SQL one when this binary has a driver (it does:
// sqlite_test.go imports sandbox/sqlite).
func storesUnderTest(t *testing.T) map[string]func() (ledger.Store, map[string]*merchant) {
	t.Helper()
	cfg := []Merchant{{APIKey: "k1", Secret: "s1", Terminals: []Terminal{{ID: "t1", Balance: decimal.RequireFromString("10"), IsActive: true}}}}
	return map[string]func() (ledger.Store, map[string]*merchant){
		"memory": func() (ledger.Store, map[string]*merchant) {
			st := newMemStore(cfg)
			return st, st.Merchants()
		},
		"sql": func() (ledger.Store, map[string]*merchant) {
			var ms map[string]*merchant
			st, err := openSQLStore(sqlDeps{merchants: cfg, maxSamePending: 100,
				merchant: func(k string) *merchant { return ms[k] }}, filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			ms = st.Merchants()
			st.wrote = true
			if err := st.Commit(); err != nil {
				t.Fatal(err)
			}
			return st, ms
		},
	}
}

// A rule that changes a resource and forgets to save it loses the change,
// in memory as on a file: the suite in memory catches a forgotten save.
// The PENDING counter and the expiry follow the saved status only.
func TestStoreKeepsOnlyWhatIsSaved(t *testing.T) {
	for name, open := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			st, ms := open()
			m := ms["k1"]
			commit := func() {
				t.Helper()
				if err := st.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			amt := decimal.RequireFromString("1500.5")
			p := &payment{Merchant: m, Terminal: m.Terminals[0], ID: "p1", ExtID: "e1", Amount: amt, Method: "CARD",
				Status: statusPending, ValidUntil: base.Add(time.Minute), CreatedAt: base}
			st.AddPayment(p)
			p.Holder = "changed after add" // not saved
			st.AddPayout(&payout{Merchant: m, ID: "po1", ExtID: "x1", Amount: amt, Status: PayoutPending, CreatedAt: base})
			st.AddWithdrawal(&withdrawal{Merchant: m, Terminal: m.Terminals[0], ID: "w1", Amount: decimal.NewFromInt(1),
				Status: WithdrawalPending, CreatedAt: base})
			commit()

			// Changed, never saved.
			got := st.Payment("p1")
			if again := st.PaymentByExt(m, "e1"); again != got {
				t.Fatal("two lookups of one payment in a section are not one copy")
			}
			got.Status = statusCompleted
			got.Dispute = &dispute{Comment: "unsaved"}
			st.Payout("po1").Status = PayoutCompleted
			st.Withdrawal("w1").Status = WithdrawalCompleted
			commit()

			check := func(wantPayment, wantPayout, wantWithdrawal string, wantPending int) {
				t.Helper()
				p := st.Payment("p1")
				if p.Status != wantPayment || p.Holder != "" {
					t.Fatalf("payment status %s holder %q, want %s and no holder", p.Status, p.Holder, wantPayment)
				}
				if (p.Dispute != nil) != (wantPayment == statusDispute) {
					t.Fatalf("payment dispute %+v with status %s", p.Dispute, p.Status)
				}
				if s := st.PaymentByExt(m, "e1").Status; s != wantPayment {
					t.Fatalf("payment by ext_id: %s, want %s", s, wantPayment)
				}
				if s := st.Payout("po1").Status; s != wantPayout {
					t.Fatalf("payout: %s, want %s", s, wantPayout)
				}
				if l, n := st.ListPayouts(m, ledger.PayoutFilter{}, 10, 0); n != 1 || l[0].Status != wantPayout {
					t.Fatalf("payout list: %d, %+v, want %s", n, l, wantPayout)
				}
				if s := st.Withdrawal("w1").Status; s != wantWithdrawal {
					t.Fatalf("withdrawal: %s, want %s", s, wantWithdrawal)
				}
				if n := st.PendingWithAmount(m, amountKey(amt)); n != wantPending {
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
				commit()
			}
			check(statusPending, PayoutPending, WithdrawalPending, 1)

			// Saved.
			p = st.Payment("p1")
			p.Status = statusDispute
			p.Dispute = &dispute{Comment: "saved"}
			st.SavePayment(p)
			po := st.Payout("po1")
			po.Status = PayoutProcessing
			st.SavePayout(po)
			w := st.Withdrawal("w1")
			w.Status = WithdrawalProcessing
			st.SaveWithdrawal(w)
			commit()
			check(statusDispute, PayoutProcessing, WithdrawalProcessing, 0)
			if due := st.DueExpiry(base.Add(time.Hour), 10); len(due) != 0 {
				t.Fatalf("a payment no longer PENDING is due: %+v", due[0])
			}
			commit()

			// A saved copy shares nothing with the one the section changes.
			p = st.Payment("p1")
			p.Dispute.Comment = "changed in place"
			commit()
			if c := st.Payment("p1").Dispute.Comment; c != "saved" {
				t.Fatalf("dispute comment %q, want the saved one", c)
			}
			commit()
		})
	}
}

// The expiry finds a PENDING payment whose unsaved change said otherwise.
func TestStoreExpiryFollowsSavedStatus(t *testing.T) {
	for name, open := range storesUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			st, ms := open()
			m := ms["k1"]
			st.AddPayment(&payment{Merchant: m, Terminal: m.Terminals[0], ID: "p1", ExtID: "e1", Amount: decimal.NewFromInt(100),
				Status: statusPending, ValidUntil: base.Add(time.Minute), CreatedAt: base})
			must(t, st.Commit())
			st.Payment("p1").Status = statusCancelled // not saved
			must(t, st.Commit())
			due := st.DueExpiry(base.Add(time.Hour), 10)
			if len(due) != 1 || due[0].ID != "p1" || due[0].Status != statusPending {
				t.Fatalf("due: %+v, want p1 PENDING", due)
			}
			must(t, st.Commit())
		})
	}
}
