package sandbox

import (
	"container/heap"
	"sort"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// coreStore is where the sandbox keeps its resources: the Store the
// ledger defines, and the outbox of webhook deliveries, which must commit
// with the change it reports. memStore keeps Go maps (no Config.DBPath:
// today's speed for tests) and sqlStore keeps an SQLite file
// (sqlstore.go). Every method is called with Server.mu held, inside one
// section that Server.commit ends with Commit: a section's changes reach
// the file together or not at all. Both stores hand out copies and keep only what is saved (see
// ledger.Store), so a forgotten save loses the change in memory as on a
// file, and the suite in memory catches it.
type coreStore interface {
	ledger.Store
	// Outbox records a webhook delivery before it is sent: in the same
	// section (and so the same transaction) as the change it reports.
	Outbox(key string, o webhook.Outgoing)
}

// store is the Server's view of its coreStore: the names the rules were
// written with.
type store struct{ core coreStore }

func (s store) merchants() map[string]*merchant { return s.core.Merchants() }
func (s store) reset() map[string]*merchant     { return s.core.Reset() }
func (s store) payment(id string) *payment      { return s.core.Payment(id) }
func (s store) paymentByExt(m *merchant, extID string) *payment {
	return s.core.PaymentByExt(m, extID)
}
func (s store) addPayment(p *payment) { s.core.AddPayment(p) }

// savePayment writes p back; was, its status when the section read it,
// is the caller's word the stores no longer need: they know what they
// saved.
func (s store) savePayment(p *payment, was string) { s.core.SavePayment(p) }
func (s store) pendingWithAmount(m *merchant, key string) int {
	return s.core.PendingWithAmount(m, key)
}
func (s store) dueExpiry(now time.Time, limit int) []*payment { return s.core.DueExpiry(now, limit) }
func (s store) nextExpiry() (time.Time, bool)                 { return s.core.NextExpiry() }
func (s store) recentPayments(limit int) []*payment           { return s.core.RecentPayments(limit) }
func (s store) payout(id string) *payout                      { return s.core.Payout(id) }
func (s store) payoutByExt(m *merchant, extID string) *payout { return s.core.PayoutByExt(m, extID) }
func (s store) addPayout(p *payout)                           { s.core.AddPayout(p) }
func (s store) savePayout(p *payout)                          { s.core.SavePayout(p) }
func (s store) listPayouts(m *merchant, f payoutFilter, limit, offset int) ([]*payout, int) {
	return s.core.ListPayouts(m, ledger.PayoutFilter{Status: f.status, From: f.from, To: f.to}, limit, offset)
}
func (s store) recentPayouts(limit int) []*payout         { return s.core.RecentPayouts(limit) }
func (s store) withdrawal(id string) *withdrawal          { return s.core.Withdrawal(id) }
func (s store) addWithdrawal(w *withdrawal)               { s.core.AddWithdrawal(w) }
func (s store) saveWithdrawal(w *withdrawal)              { s.core.SaveWithdrawal(w) }
func (s store) recentWithdrawals(limit int) []*withdrawal { return s.core.RecentWithdrawals(limit) }
func (s store) saveTerminal(m *merchant, t *terminal)     { s.core.SaveTerminal(m, t) }
func (s store) saveMerchant(m *merchant)                  { s.core.SaveMerchant(m) }

// counts tells m's resources by status, for State and Stats.
func (s store) counts(m *merchant) (payments, payouts, withdrawals map[string]int) {
	return s.core.Counts(m)
}

// inFlight lists what the autopilot may still move.
func (s store) inFlight() []autopilot.InFlight {
	pm, po, wd := s.core.InFlight()
	var out []autopilot.InFlight
	for _, p := range pm {
		out = appendInFlightPayment(out, p)
	}
	for _, p := range po {
		out = appendInFlightPayout(out, p)
	}
	for _, w := range wd {
		out = appendInFlightWithdrawal(out, w)
	}
	return out
}

func (s store) outbox(key string, dl delivery) { s.core.Outbox(key, dl.out()) }

func (s store) commit() error { return s.core.Commit() }
func (s store) rollback()     { s.core.Rollback() }
func (s store) ping() error   { return s.core.Ping() }
func (s store) close() error  { return s.core.Close() }

// journal keeps the sandbox's diagnostics, apart from its resources: the
// clock offset, the faults, the request counters and log, and the
// delivery log's updates. In memory they live in the Server alone
// (memJournal keeps nothing); with Config.DBPath they are written with
// the next change, so that a restart finds them.
type journal interface {
	saveOffset(d time.Duration)
	saveFaults(f []*Fault)
	// saveCounters records the request counters; the journal may write
	// them with the next change rather than at once (they are
	// diagnostics).
	saveCounters(c map[routeKey]int)
	// logRequest records one line of the request log, lazily like
	// saveCounters.
	logRequest(r RequestRecord)
	// deliveryUpdated records a delivery's attempts and state, lazily.
	deliveryUpdated(rec Delivery)
}

// memJournal is the journal without Config.DBPath: the Server's memory is
// the only copy, and nothing survives it.
type memJournal struct{}

func (memJournal) saveOffset(time.Duration)      {}
func (memJournal) saveFaults([]*Fault)           {}
func (memJournal) saveCounters(map[routeKey]int) {}
func (memJournal) logRequest(RequestRecord)      {}
func (memJournal) deliveryUpdated(Delivery)      {}

// payoutFilter is the query of GET /v1/payouts.
type payoutFilter struct {
	status   string
	from, to time.Time
}

// uiListLimit bounds the rows the dashboard shows per list: the newest
// ones. A staging sandbox holds hundreds of thousands of payments; a page
// that rendered them all would be useless and pin memory.
const uiListLimit = 500

// buildMerchants turns the configured merchants into their starting state.
func buildMerchants(cfg []Merchant) map[string]*merchant {
	out := make(map[string]*merchant, len(cfg))
	for _, mc := range cfg {
		m := &merchant{APIKey: mc.APIKey, Name: mc.Name}
		for _, t := range mc.Terminals {
			m.Terminals = append(m.Terminals, &terminal{
				ID: t.ID, Name: t.Name, Balance: ledger.Balance{Available: t.Balance, Frozen: t.BalanceFrozen},
				Fee: t.WithdrawalFee, Active: t.IsActive,
			})
		}
		out[mc.APIKey] = m
	}
	return out
}

// memStore keeps everything in Go maps: the store without Config.DBPath.
// It keeps its own copies of the resources and hands out copies, as
// sqlStore does: a section's lookups of one id share one copy, dropped when
// the section ends, and only a save writes a copy back. A rule that
// changes a resource and forgets to save it loses the change here too, so
// the suite in memory catches the slip without a run on files. The PENDING
// counters and the expiry heap follow the saved copies only.
type memStore struct {
	cfg         []Merchant
	payments    map[string]*payment
	payouts     map[string]*payout
	payoutList  []*payout // creation order
	withdrawals map[string]*withdrawal
	byExt       map[*merchant]map[string]*payment
	payoutByX   map[*merchant]map[string]*payout
	pending     map[*merchant]map[string]int // PENDING payments per amountKey
	expiry      expiryHeap

	// The section's copies, by id: kept across sections only in their
	// maps' capacity, so a steady stream of requests allocates no map.
	pm map[string]*payment
	po map[string]*payout
	wd map[string]*withdrawal
}

func newMemStore(cfg []Merchant) *memStore {
	s := &memStore{cfg: cfg}
	s.clear()
	return s
}

func (s *memStore) clear() {
	s.payments = map[string]*payment{}
	s.payouts = map[string]*payout{}
	s.payoutList = nil
	s.withdrawals = map[string]*withdrawal{}
	s.byExt = map[*merchant]map[string]*payment{}
	s.payoutByX = map[*merchant]map[string]*payout{}
	s.pending = map[*merchant]map[string]int{}
	s.expiry = nil
	s.dropCopies()
}

// dropCopies ends the section's view: its next lookups copy the saved
// state again.
func (s *memStore) dropCopies() {
	clear(s.pm)
	clear(s.po)
	clear(s.wd)
}

// copyPayment makes dst a copy of src that shares nothing it could change
// (the dispute); the merchant and terminal are the Server's, shared as
// sqlStore shares them.
func copyPayment(dst, src *payment) {
	*dst = *src
	if src.Dispute != nil {
		d := *src.Dispute
		if d.Amount != nil {
			a := *d.Amount
			d.Amount = &a
		}
		dst.Dispute = &d
	}
}

// sectionPayment is the section's copy of the saved payment sp.
func (s *memStore) sectionPayment(sp *payment) *payment {
	if c := s.pm[sp.ID]; c != nil {
		return c
	}
	c := new(payment)
	copyPayment(c, sp)
	return sectionCopy(&s.pm, c.ID, c)
}

func (s *memStore) sectionPayout(sp *payout) *payout {
	if c := s.po[sp.ID]; c != nil {
		return c
	}
	c := *sp
	return sectionCopy(&s.po, c.ID, &c)
}

func (s *memStore) sectionWithdrawal(sw *withdrawal) *withdrawal {
	if c := s.wd[sw.ID]; c != nil {
		return c
	}
	c := *sw
	return sectionCopy(&s.wd, c.ID, &c)
}

func (s *memStore) Merchants() map[string]*merchant { return buildMerchants(s.cfg) }

func (s *memStore) Reset() map[string]*merchant {
	s.clear()
	return buildMerchants(s.cfg)
}

func (s *memStore) Payment(id string) *payment {
	if c := s.pm[id]; c != nil {
		return c
	}
	if sp := s.payments[id]; sp != nil {
		return s.sectionPayment(sp)
	}
	return nil
}

func (s *memStore) PaymentByExt(m *merchant, extID string) *payment {
	if sp := s.byExt[m][extID]; sp != nil {
		return s.sectionPayment(sp)
	}
	return nil
}

// addPayment keeps a copy of p; p itself becomes the section's copy, as
// after a lookup.
func (s *memStore) AddPayment(p *payment) {
	sp := new(payment)
	copyPayment(sp, p)
	s.payments[sp.ID] = sp
	if s.byExt[sp.Merchant] == nil {
		s.byExt[sp.Merchant] = map[string]*payment{}
		s.pending[sp.Merchant] = map[string]int{}
	}
	s.byExt[sp.Merchant][sp.ExtID] = sp
	if sp.Status == statusPending {
		s.pending[sp.Merchant][amountKey(sp.Amount)]++
		heap.Push(&s.expiry, sp)
	}
	sectionCopy(&s.pm, p.ID, p)
}

// SavePayment writes p over the saved copy. The PENDING counters and the
// expiry heap follow the saved status.
func (s *memStore) SavePayment(p *payment) {
	sp := s.payments[p.ID]
	if sp == nil {
		return // never added: sqlStore's UPDATE would change no row
	}
	wasPending := sp.Status == statusPending
	copyPayment(sp, p)
	switch isPending := sp.Status == statusPending; {
	case wasPending && !isPending:
		k := amountKey(sp.Amount)
		if s.pending[sp.Merchant][k]--; s.pending[sp.Merchant][k] <= 0 {
			delete(s.pending[sp.Merchant], k)
		}
	case !wasPending && isPending: // no rule moves a payment back to PENDING; kept consistent if one does
		s.pending[sp.Merchant][amountKey(sp.Amount)]++
		heap.Push(&s.expiry, sp)
	}
}

func (s *memStore) PendingWithAmount(m *merchant, key string) int { return s.pending[m][key] }

func (s *memStore) DueExpiry(now time.Time, limit int) []*payment {
	var out []*payment
	for len(out) < limit && len(s.expiry) > 0 && !now.Before(s.expiry[0].ValidUntil) {
		if sp := heap.Pop(&s.expiry).(*payment); sp.Status == statusPending {
			out = append(out, s.sectionPayment(sp))
		}
	}
	return out
}

func (s *memStore) NextExpiry() (time.Time, bool) {
	for len(s.expiry) > 0 && s.expiry[0].Status != statusPending {
		heap.Pop(&s.expiry) // settled before it was due: no timer for it
	}
	if len(s.expiry) == 0 {
		return time.Time{}, false
	}
	return s.expiry[0].ValidUntil, true
}

func (s *memStore) RecentPayments(limit int) []*payment {
	ps := make([]*payment, 0, len(s.payments))
	for _, p := range s.payments {
		ps = append(ps, p)
	}
	// Newest first; ties fall back to ext_id and id to keep rows from
	// jumping between refreshes (sqlStore orders the same way).
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		if a.ExtID != b.ExtID {
			return a.ExtID < b.ExtID
		}
		return a.ID < b.ID
	})
	ps = ps[:min(limit, len(ps))]
	for i, sp := range ps {
		ps[i] = s.sectionPayment(sp)
	}
	return ps
}

func (s *memStore) Payout(id string) *payout {
	if sp := s.payouts[id]; sp != nil {
		return s.sectionPayout(sp)
	}
	return nil
}

func (s *memStore) PayoutByExt(m *merchant, extID string) *payout {
	if sp := s.payoutByX[m][extID]; sp != nil {
		return s.sectionPayout(sp)
	}
	return nil
}

func (s *memStore) AddPayout(p *payout) {
	sp := new(payout)
	*sp = *p
	s.payouts[sp.ID] = sp
	if s.payoutByX[sp.Merchant] == nil {
		s.payoutByX[sp.Merchant] = map[string]*payout{}
	}
	s.payoutByX[sp.Merchant][sp.ExtID] = sp
	s.payoutList = append(s.payoutList, sp)
	sectionCopy(&s.po, p.ID, p)
}

func (s *memStore) SavePayout(p *payout) {
	if sp := s.payouts[p.ID]; sp != nil {
		*sp = *p
	}
}

func (s *memStore) ListPayouts(m *merchant, f ledger.PayoutFilter, limit, offset int) ([]*payout, int) {
	var out []*payout
	total := 0
	for _, p := range s.payoutList {
		if p.Merchant != m || !f.Match(p) {
			continue
		}
		if total >= offset && len(out) < limit {
			out = append(out, s.sectionPayout(p))
		}
		total++
	}
	return out, total
}

func (s *memStore) RecentPayouts(limit int) []*payout {
	out := make([]*payout, 0, min(limit, len(s.payoutList)))
	for i := len(s.payoutList) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, s.sectionPayout(s.payoutList[i]))
	}
	return out
}

func (s *memStore) Withdrawal(id string) *withdrawal {
	if sw := s.withdrawals[id]; sw != nil {
		return s.sectionWithdrawal(sw)
	}
	return nil
}

func (s *memStore) AddWithdrawal(w *withdrawal) {
	sw := new(withdrawal)
	*sw = *w
	s.withdrawals[sw.ID] = sw
	sectionCopy(&s.wd, w.ID, w)
}

func (s *memStore) SaveWithdrawal(w *withdrawal) {
	if sw := s.withdrawals[w.ID]; sw != nil {
		*sw = *w
	}
}

func (s *memStore) RecentWithdrawals(limit int) []*withdrawal {
	ws := make([]*withdrawal, 0, len(s.withdrawals))
	for _, w := range s.withdrawals {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool {
		if !ws[i].CreatedAt.Equal(ws[j].CreatedAt) {
			return ws[i].CreatedAt.After(ws[j].CreatedAt)
		}
		return ws[i].ID < ws[j].ID
	})
	ws = ws[:min(limit, len(ws))]
	for i, sw := range ws {
		ws[i] = s.sectionWithdrawal(sw)
	}
	return ws
}

func (s *memStore) SaveTerminal(*merchant, *terminal) {}
func (s *memStore) SaveMerchant(*merchant)            {}

func (s *memStore) Counts(m *merchant) (map[string]int, map[string]int, map[string]int) {
	pm, po, wd := map[string]int{}, map[string]int{}, map[string]int{}
	for _, p := range s.byExt[m] {
		pm[p.Status]++
	}
	for _, p := range s.payoutByX[m] {
		po[p.Status]++
	}
	for _, w := range s.withdrawals {
		if w.Merchant == m {
			wd[w.Status]++
		}
	}
	return pm, po, wd
}

func (s *memStore) InFlight() (pm []*payment, po []*payout, wd []*withdrawal) {
	for _, p := range s.payments {
		if p.Status == statusPending || p.Status == statusProcessing || p.Status == statusDispute {
			pm = append(pm, s.sectionPayment(p))
		}
	}
	for _, p := range s.payouts {
		if p.Status == PayoutPending || p.Status == PayoutProcessing {
			po = append(po, s.sectionPayout(p))
		}
	}
	for _, w := range s.withdrawals {
		if w.Status == WithdrawalPending || w.Status == WithdrawalProcessing {
			wd = append(wd, s.sectionWithdrawal(w))
		}
	}
	return pm, po, wd
}

// Outbox keeps nothing: in memory a delivery lives in the dispatcher
// alone, as the rest of the Server's memory does.
func (s *memStore) Outbox(string, webhook.Outgoing) {}
func (s *memStore) Commit() error                   { s.dropCopies(); return nil }
func (s *memStore) Rollback()                       { s.dropCopies() }
func (s *memStore) Ping() error                     { return nil }
func (s *memStore) Close() error                    { return nil }

// expiryHeap orders payments by valid_until so expiry costs O(log n) per
// payment instead of a scan on every request.
type expiryHeap []*payment

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].ValidUntil.Before(h[j].ValidUntil) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(*payment)) }
func (h *expiryHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}
