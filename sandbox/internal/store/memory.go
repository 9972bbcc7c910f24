package store

import (
	"container/heap"
	"sort"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// Memory keeps everything in Go maps: the store without Config.DBPath.
// It keeps its own copies of the resources and hands out copies, as
// the SQL store does: a section's lookups of one id share one copy, dropped when
// the section ends, and only a save writes a copy back. A rule that
// changes a resource and forgets to save it loses the change here too, so
// the suite in memory catches the slip without a run on files. The PENDING
// counters and the expiry heap follow the saved copies only.
type Memory struct {
	start       func() []*ledger.Merchant
	payments    map[string]*payment
	payouts     map[string]*payout
	payoutList  []*payout // creation order
	withdrawals map[string]*withdrawal
	byExt       map[string]map[string]*payment // by API key, then ext_id
	payoutByX   map[string]map[string]*payout
	pending     map[string]map[string]int // PENDING payments per API key and amountKey
	expiry      expiryHeap
	ms          merchants // the merchants and terminals, and the section's copies
	vals        values    // the sandbox's own state (Value)

	// The section's copies, by id: kept across sections only in their
	// maps' capacity, so a steady stream of requests allocates no map.
	pm map[string]*payment
	po map[string]*payout
	wd map[string]*withdrawal
}

// NewMemory returns an empty store whose merchants start returns in their
// starting state (for Merchants, and again for each Reset).
func NewMemory(start func() []*ledger.Merchant) *Memory {
	s := &Memory{start: start}
	s.clear()
	s.ms.set(start())
	return s
}

func (s *Memory) clear() {
	s.payments = map[string]*payment{}
	s.payouts = map[string]*payout{}
	s.payoutList = nil
	s.withdrawals = map[string]*withdrawal{}
	s.byExt = map[string]map[string]*payment{}
	s.payoutByX = map[string]map[string]*payout{}
	s.pending = map[string]map[string]int{}
	s.expiry = nil
	s.dropCopies()
}

// dropCopies ends the section's view: its next lookups copy the saved
// state again.
func (s *Memory) dropCopies() {
	dropSection(&s.pm)
	dropSection(&s.po)
	dropSection(&s.wd)
	s.ms.rollback()
}

// maxKeptCopies is the most copies a section may have made for its map to
// be kept for the next one: clearing a map costs as much as the most it
// ever held, and a dashboard's section copies hundreds.
const maxKeptCopies = 16

func dropSection[T any](m *map[string]*T) {
	if len(*m) > maxKeptCopies {
		*m = nil
		return
	}
	clear(*m)
}

// sectionPayment is the section's copy of the saved payment sp.
func (s *Memory) sectionPayment(sp *payment) *payment {
	if c := s.pm[sp.ID]; c != nil {
		return c
	}
	c := sp.Copy()
	c.Merchant, c.Terminal = s.ms.of(sp.Merchant, sp.Terminal)
	return sectionCopy(&s.pm, c.ID, &c)
}

func (s *Memory) sectionPayout(sp *payout) *payout {
	if c := s.po[sp.ID]; c != nil {
		return c
	}
	c := *sp
	c.Merchant, _ = s.ms.of(sp.Merchant, nil)
	return sectionCopy(&s.po, c.ID, &c)
}

func (s *Memory) sectionWithdrawal(sw *withdrawal) *withdrawal {
	if c := s.wd[sw.ID]; c != nil {
		return c
	}
	c := *sw
	c.Merchant, c.Terminal = s.ms.of(sw.Merchant, sw.Terminal)
	return sectionCopy(&s.wd, c.ID, &c)
}

// Merchant: see ledger.Txn.
func (s *Memory) Merchant(apiKey string) *merchant { return s.ms.get(apiKey) }

// Reset: see ledger.Txn.
func (s *Memory) Reset() {
	s.clear()
	s.ms.reset(s.start())
}

// Payment: see ledger.Txn.
func (s *Memory) Payment(id string) *payment {
	if c := s.pm[id]; c != nil {
		return c
	}
	if sp := s.payments[id]; sp != nil {
		return s.sectionPayment(sp)
	}
	return nil
}

// PaymentByExt: see ledger.Txn.
func (s *Memory) PaymentByExt(m *merchant, extID string) *payment {
	if sp := s.byExt[m.APIKey][extID]; sp != nil {
		return s.sectionPayment(sp)
	}
	return nil
}

// AddPayment keeps a copy of p; p itself becomes the section's copy, as
// after a lookup.
func (s *Memory) AddPayment(p *payment) {
	c := p.Copy()
	sp := &c
	sp.Merchant, sp.Terminal = s.ms.keptOf(p.Merchant, p.Terminal)
	s.payments[sp.ID] = sp
	key := sp.Merchant.APIKey
	if s.byExt[key] == nil {
		s.byExt[key] = map[string]*payment{}
		s.pending[key] = map[string]int{}
	}
	s.byExt[key][sp.ExtID] = sp
	if sp.Status == statusPending {
		s.pending[key][ledger.AmountKey(sp.Amount)]++
		heap.Push(&s.expiry, sp)
	}
	sectionCopy(&s.pm, p.ID, p)
}

// SavePayment writes p's status, receipt and dispute over the saved copy,
// the columns the SQL store's UPDATE writes: a change to another field is
// lost on a file, so it is lost here too (and the expiry heap, ordered by
// ValidUntil, cannot be disturbed). The PENDING counters and the heap
// follow the saved status.
func (s *Memory) SavePayment(p *payment) {
	sp := s.payments[p.ID]
	if sp == nil {
		return // never added: the SQL store's UPDATE would change no row
	}
	wasPending := sp.Status == statusPending
	c := p.Copy() // the dispute shares nothing with p's
	sp.Status, sp.Receipt, sp.Dispute = c.Status, c.Receipt, c.Dispute
	switch isPending := sp.Status == statusPending; {
	case wasPending && !isPending:
		k := ledger.AmountKey(sp.Amount)
		if s.pending[sp.Merchant.APIKey][k]--; s.pending[sp.Merchant.APIKey][k] <= 0 {
			delete(s.pending[sp.Merchant.APIKey], k)
		}
	case !wasPending && isPending: // no rule moves a payment back to PENDING; kept consistent if one does
		s.pending[sp.Merchant.APIKey][ledger.AmountKey(sp.Amount)]++
		heap.Push(&s.expiry, sp)
	}
}

// PendingWithAmount: see ledger.Txn.
func (s *Memory) PendingWithAmount(m *merchant, key string) int { return s.pending[m.APIKey][key] }

// DueExpiry: see ledger.Txn.
func (s *Memory) DueExpiry(now time.Time, limit int) []*payment {
	var out []*payment
	for len(out) < limit && len(s.expiry) > 0 && !now.Before(s.expiry[0].ValidUntil) {
		if sp := heap.Pop(&s.expiry).(*payment); sp.Status == statusPending {
			out = append(out, s.sectionPayment(sp))
		}
	}
	return out
}

// NextExpiry: see ledger.Txn.
func (s *Memory) NextExpiry() (time.Time, bool) {
	for len(s.expiry) > 0 && s.expiry[0].Status != statusPending {
		heap.Pop(&s.expiry) // settled before it was due: no timer for it
	}
	if len(s.expiry) == 0 {
		return time.Time{}, false
	}
	return s.expiry[0].ValidUntil, true
}

// RecentPayments: see ledger.Txn.
func (s *Memory) RecentPayments(limit int) []*payment {
	ps := make([]*payment, 0, len(s.payments))
	for _, p := range s.payments {
		ps = append(ps, p)
	}
	// Newest first; ties fall back to ext_id and id to keep rows from
	// jumping between refreshes (the SQL store orders the same way).
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

// Payout: see ledger.Txn.
func (s *Memory) Payout(id string) *payout {
	if sp := s.payouts[id]; sp != nil {
		return s.sectionPayout(sp)
	}
	return nil
}

// PayoutByExt: see ledger.Txn.
func (s *Memory) PayoutByExt(m *merchant, extID string) *payout {
	if sp := s.payoutByX[m.APIKey][extID]; sp != nil {
		return s.sectionPayout(sp)
	}
	return nil
}

// AddPayout: see ledger.Txn.
func (s *Memory) AddPayout(p *payout) {
	sp := new(payout)
	*sp = *p
	sp.Merchant, _ = s.ms.keptOf(p.Merchant, nil)
	s.payouts[sp.ID] = sp
	if s.payoutByX[sp.Merchant.APIKey] == nil {
		s.payoutByX[sp.Merchant.APIKey] = map[string]*payout{}
	}
	s.payoutByX[sp.Merchant.APIKey][sp.ExtID] = sp
	s.payoutList = append(s.payoutList, sp)
	sectionCopy(&s.po, p.ID, p)
}

// SavePayout writes p's status, provider order id and completion time,
// the columns the SQL store's UPDATE writes, as SavePayment.
func (s *Memory) SavePayout(p *payout) {
	if sp := s.payouts[p.ID]; sp != nil {
		sp.Status, sp.ProviderOrderID, sp.CompletedAt = p.Status, p.ProviderOrderID, p.CompletedAt
	}
}

// ListPayouts: see ledger.Txn.
func (s *Memory) ListPayouts(m *merchant, f ledger.PayoutFilter, limit, offset int) ([]*payout, int) {
	var out []*payout
	total := 0
	for _, p := range s.payoutList {
		if p.Merchant.APIKey != m.APIKey || !f.Match(p) {
			continue
		}
		if total >= offset && len(out) < limit {
			out = append(out, s.sectionPayout(p))
		}
		total++
	}
	return out, total
}

// RecentPayouts: see ledger.Txn.
func (s *Memory) RecentPayouts(limit int) []*payout {
	out := make([]*payout, 0, min(limit, len(s.payoutList)))
	for i := len(s.payoutList) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, s.sectionPayout(s.payoutList[i]))
	}
	return out
}

// Withdrawal: see ledger.Txn.
func (s *Memory) Withdrawal(id string) *withdrawal {
	if sw := s.withdrawals[id]; sw != nil {
		return s.sectionWithdrawal(sw)
	}
	return nil
}

// AddWithdrawal: see ledger.Txn.
func (s *Memory) AddWithdrawal(w *withdrawal) {
	sw := new(withdrawal)
	*sw = *w
	sw.Merchant, sw.Terminal = s.ms.keptOf(w.Merchant, w.Terminal)
	s.withdrawals[sw.ID] = sw
	sectionCopy(&s.wd, w.ID, w)
}

// SaveWithdrawal writes w's status, transaction hash and update time,
// the columns the SQL store's UPDATE writes, as SavePayment.
func (s *Memory) SaveWithdrawal(w *withdrawal) {
	if sw := s.withdrawals[w.ID]; sw != nil {
		sw.Status, sw.TxHash, sw.UpdatedAt = w.Status, w.TxHash, w.UpdatedAt
	}
}

// RecentWithdrawals: see ledger.Txn.
func (s *Memory) RecentWithdrawals(limit int) []*withdrawal {
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

// SaveTerminal: see ledger.Txn.
func (s *Memory) SaveTerminal(m *merchant, t *terminal) { s.ms.saveTerminal(m, t) }

// SaveMerchant: see ledger.Txn.
func (s *Memory) SaveMerchant(m *merchant) { s.ms.saveMerchant(m) }

// Counts: see ledger.Txn.
func (s *Memory) Counts(m *merchant) (map[string]int, map[string]int, map[string]int) {
	pm, po, wd := map[string]int{}, map[string]int{}, map[string]int{}
	for _, p := range s.byExt[m.APIKey] {
		pm[p.Status]++
	}
	for _, p := range s.payoutByX[m.APIKey] {
		po[p.Status]++
	}
	for _, w := range s.withdrawals {
		if w.Merchant.APIKey == m.APIKey {
			wd[w.Status]++
		}
	}
	return pm, po, wd
}

// InFlight: see ledger.Txn. In creation order (CreatedAt, then id), as
// the SQL store answers, not in the maps' random order: the autopilot
// resumes them in this order.
func (s *Memory) InFlight() (pm []*payment, po []*payout, wd []*withdrawal) {
	for _, p := range s.payments {
		if p.Status == statusPending || p.Status == statusProcessing || p.Status == statusDispute {
			pm = append(pm, s.sectionPayment(p))
		}
	}
	sort.Slice(pm, func(i, j int) bool { return createdBefore(pm[i].CreatedAt, pm[i].ID, pm[j].CreatedAt, pm[j].ID) })
	for _, p := range s.payoutList {
		if p.Status == ledger.PayoutPending || p.Status == ledger.PayoutProcessing {
			po = append(po, s.sectionPayout(p))
		}
	}
	for _, w := range s.withdrawals {
		if w.Status == ledger.WithdrawalPending || w.Status == ledger.WithdrawalProcessing {
			wd = append(wd, s.sectionWithdrawal(w))
		}
	}
	sort.Slice(wd, func(i, j int) bool { return createdBefore(wd[i].CreatedAt, wd[i].ID, wd[j].CreatedAt, wd[j].ID) })
	return pm, po, wd
}

// createdBefore orders resources by creation time, ties by id.
func createdBefore(a time.Time, aID string, b time.Time, bID string) bool {
	if !a.Equal(b) {
		return a.Before(b)
	}
	return aID < bID
}

// Outbox keeps nothing: in memory a delivery lives in the dispatcher
// alone, as the rest of the Service's memory does.
func (s *Memory) Outbox(string, webhook.Outgoing) {}

// Commit ends the transaction's view; what was saved is kept already, so
// it never fails.
func (s *Memory) Commit() error { s.ms.commit(); s.vals.commit(); s.dropCopies(); return nil }

// Rollback ends the transaction's view; it cannot undo a save.
func (s *Memory) Rollback() { s.vals.rollback(); s.dropCopies() }

// Begin: see Store. The memory store's transaction is the store itself,
// its copies and what it saved since the last Commit.
func (s *Memory) Begin() Txn { return s }

// Value: see Txn.
func (s *Memory) Value(key string) any { return s.vals.get(key) }

// SetValue: see Txn.
func (s *Memory) SetValue(key string, x any) { s.vals.set(key, x) }

// Ping: see ledger.Txn.
func (s *Memory) Ping() error { return nil }

// Close: see ledger.Txn.
func (s *Memory) Close() error { return nil }

// expiryHeap orders payments by valid_until so expiry costs O(log n) per
// payment instead of a scan on every request. Ties go by id, as the SQL
// store's ORDER BY valid_until, id: a batch expires in the same order on
// either store.
type expiryHeap []*payment

func (h expiryHeap) Len() int { return len(h) }
func (h expiryHeap) Less(i, j int) bool {
	if !h[i].ValidUntil.Equal(h[j].ValidUntil) {
		return h[i].ValidUntil.Before(h[j].ValidUntil)
	}
	return h[i].ID < h[j].ID
}
func (h expiryHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)   { *h = append(*h, x.(*payment)) }
func (h *expiryHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}
