package sandbox

import (
	"container/heap"
	"sort"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// store is where the sandbox keeps its resources. The rules (payments.go,
// payouts.go, funds.go, the controls, the autopilot) are written once
// against it; memStore keeps Go maps (no Config.DBPath: today's speed for
// tests) and sqlStore keeps an SQLite file (sqlstore.go). Every method is
// called with Server.mu held, inside one section that Server.commit ends
// with commit (or with end, and a later section's commit): a section's
// changes reach the file together or not at all.
//
// A resource returned by a lookup is the section's copy: the rules may
// change it, and then call the matching save* within the same section.
// Both stores hand out copies and keep only what is saved, so a forgotten
// save loses the change in memory as on a file, and the suite in memory
// catches it.
type store interface {
	// merchants builds the merchants and their terminals: from the
	// configuration for a fresh store, from the file for a used one.
	merchants() map[string]*merchant

	payment(id string) *payment
	paymentByExt(m *merchant, extID string) *payment
	addPayment(p *payment)
	// savePayment writes p back; was is its status when the section read
	// it, so memStore can keep its PENDING counters.
	savePayment(p *payment, was string)
	// pendingWithAmount counts m's PENDING payments of one amountKey.
	pendingWithAmount(m *merchant, key string) int
	// dueExpiry returns at most limit PENDING payments whose valid_until
	// is not after now, earliest first.
	dueExpiry(now time.Time, limit int) []*payment
	// nextExpiry is the earliest valid_until still to come (false: none).
	nextExpiry() (time.Time, bool)
	recentPayments(limit int) []*payment

	payout(id string) *payout
	payoutByExt(m *merchant, extID string) *payout
	addPayout(p *payout)
	savePayout(p *payout)
	// listPayouts returns one page of m's payouts matching f, in creation
	// order, and how many match in all.
	listPayouts(m *merchant, f payoutFilter, limit, offset int) ([]*payout, int)
	recentPayouts(limit int) []*payout

	withdrawal(id string) *withdrawal
	addWithdrawal(w *withdrawal)
	saveWithdrawal(w *withdrawal)
	recentWithdrawals(limit int) []*withdrawal

	saveTerminal(m *merchant, t *terminal)
	saveMerchant(m *merchant) // its transfer counter

	// counts tells m's resources by status, for State and Stats.
	counts(m *merchant) (payments, payouts, withdrawals map[string]int)
	// inFlight lists what the autopilot may still move.
	inFlight() []autopilot.InFlight

	saveOffset(d time.Duration)
	saveFaults(f []*Fault)
	// saveCounters records the request counters; the store may write them
	// with the next change rather than at once (they are diagnostics).
	saveCounters(c map[routeKey]int)
	// logRequest records one line of the request log, lazily like
	// saveCounters.
	logRequest(r RequestRecord)

	// outbox records a webhook delivery before it is sent: in the same
	// section (and so the same transaction) as the change it reports.
	outbox(key string, dl delivery)
	// deliveryUpdated records a delivery's attempts and state, lazily.
	deliveryUpdated(rec Delivery)

	// reset drops every resource and rebuilds the merchants from the
	// configuration.
	reset() map[string]*merchant
	// end ends the section without committing, when its changes may be
	// committed with later sections' (groupCommit, section.go); the
	// section's copies are dropped, as commit drops them.
	end() sectionEnd
	// commit ends the section, and those ended before it: sqlStore
	// commits its transaction.
	commit() error
	// rollback ends the section without keeping it (after a failed commit
	// too): sqlStore rolls its transaction back. memStore cannot undo its
	// maps; its commit never fails.
	rollback()
	// ping tells whether the store can still be used (/readyz).
	ping() error
	// close flushes what is pending and releases the store.
	close() error
}

// sectionEnd is what end tells of the transaction a section leaves open.
type sectionEnd struct {
	// pending: it holds changes not yet committed, and nothing failed, so
	// their commit may be left to a later section.
	pending bool
	// depends: the section's answer depends on those changes (it made
	// some, read some, or they touch the Server's memory, whose reads the
	// store does not see), so it is not written before they are committed.
	depends bool
}

// payoutFilter is the query of GET /v1/payouts.
type payoutFilter struct {
	status   string
	from, to time.Time
}

func (f payoutFilter) match(p *payout) bool {
	return (f.status == "" || p.Status == f.status) &&
		(f.from.IsZero() || !p.CreatedAt.Before(f.from)) &&
		(f.to.IsZero() || !p.CreatedAt.After(f.to))
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

func (s *memStore) merchants() map[string]*merchant { return buildMerchants(s.cfg) }

func (s *memStore) reset() map[string]*merchant {
	s.clear()
	return buildMerchants(s.cfg)
}

func (s *memStore) payment(id string) *payment {
	if c := s.pm[id]; c != nil {
		return c
	}
	if sp := s.payments[id]; sp != nil {
		return s.sectionPayment(sp)
	}
	return nil
}

func (s *memStore) paymentByExt(m *merchant, extID string) *payment {
	if sp := s.byExt[m][extID]; sp != nil {
		return s.sectionPayment(sp)
	}
	return nil
}

// addPayment keeps a copy of p; p itself becomes the section's copy, as
// after a lookup.
func (s *memStore) addPayment(p *payment) {
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

// savePayment writes p over the saved copy. The PENDING counters follow
// the saved status, not the caller's word for it (was), so that they
// count what a restart of a file would count.
func (s *memStore) savePayment(p *payment, _ string) {
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

func (s *memStore) pendingWithAmount(m *merchant, key string) int { return s.pending[m][key] }

func (s *memStore) dueExpiry(now time.Time, limit int) []*payment {
	var out []*payment
	for len(out) < limit && len(s.expiry) > 0 && !now.Before(s.expiry[0].ValidUntil) {
		if sp := heap.Pop(&s.expiry).(*payment); sp.Status == statusPending {
			out = append(out, s.sectionPayment(sp))
		}
	}
	return out
}

func (s *memStore) nextExpiry() (time.Time, bool) {
	for len(s.expiry) > 0 && s.expiry[0].Status != statusPending {
		heap.Pop(&s.expiry) // settled before it was due: no timer for it
	}
	if len(s.expiry) == 0 {
		return time.Time{}, false
	}
	return s.expiry[0].ValidUntil, true
}

func (s *memStore) recentPayments(limit int) []*payment {
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

func (s *memStore) payout(id string) *payout {
	if sp := s.payouts[id]; sp != nil {
		return s.sectionPayout(sp)
	}
	return nil
}

func (s *memStore) payoutByExt(m *merchant, extID string) *payout {
	if sp := s.payoutByX[m][extID]; sp != nil {
		return s.sectionPayout(sp)
	}
	return nil
}

func (s *memStore) addPayout(p *payout) {
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

func (s *memStore) savePayout(p *payout) {
	if sp := s.payouts[p.ID]; sp != nil {
		*sp = *p
	}
}

func (s *memStore) listPayouts(m *merchant, f payoutFilter, limit, offset int) ([]*payout, int) {
	var out []*payout
	total := 0
	for _, p := range s.payoutList {
		if p.Merchant != m || !f.match(p) {
			continue
		}
		if total >= offset && len(out) < limit {
			out = append(out, s.sectionPayout(p))
		}
		total++
	}
	return out, total
}

func (s *memStore) recentPayouts(limit int) []*payout {
	out := make([]*payout, 0, min(limit, len(s.payoutList)))
	for i := len(s.payoutList) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, s.sectionPayout(s.payoutList[i]))
	}
	return out
}

func (s *memStore) withdrawal(id string) *withdrawal {
	if sw := s.withdrawals[id]; sw != nil {
		return s.sectionWithdrawal(sw)
	}
	return nil
}

func (s *memStore) addWithdrawal(w *withdrawal) {
	sw := new(withdrawal)
	*sw = *w
	s.withdrawals[sw.ID] = sw
	sectionCopy(&s.wd, w.ID, w)
}

func (s *memStore) saveWithdrawal(w *withdrawal) {
	if sw := s.withdrawals[w.ID]; sw != nil {
		*sw = *w
	}
}

func (s *memStore) recentWithdrawals(limit int) []*withdrawal {
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

func (s *memStore) saveTerminal(*merchant, *terminal) {}
func (s *memStore) saveMerchant(*merchant)            {}

func (s *memStore) counts(m *merchant) (map[string]int, map[string]int, map[string]int) {
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

// inFlight reads the saved copies: it hands out values, not resources.
func (s *memStore) inFlight() []autopilot.InFlight {
	var out []autopilot.InFlight
	for _, pm := range s.payments {
		out = appendInFlightPayment(out, pm)
	}
	for _, po := range s.payouts {
		out = appendInFlightPayout(out, po)
	}
	for _, w := range s.withdrawals {
		out = appendInFlightWithdrawal(out, w)
	}
	return out
}

func (s *memStore) saveOffset(time.Duration)      {}
func (s *memStore) saveFaults([]*Fault)           {}
func (s *memStore) saveCounters(map[routeKey]int) {}
func (s *memStore) logRequest(RequestRecord)      {}
func (s *memStore) outbox(string, delivery)       {}
func (s *memStore) deliveryUpdated(Delivery)      {}
func (s *memStore) end() sectionEnd               { s.dropCopies(); return sectionEnd{} }
func (s *memStore) commit() error                 { s.dropCopies(); return nil }
func (s *memStore) rollback()                     { s.dropCopies() }
func (s *memStore) ping() error                   { return nil }
func (s *memStore) close() error                  { return nil }

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
