package sandbox

import (
	"container/heap"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Autopilot moves resources along by themselves, the way the service
// would, so that a staging backend needs no one to press buttons: a
// confirmed payment is verified, an opened dispute is reviewed, a payout
// goes pending -> processing -> a final status, a withdrawal completes with
// a generated tx_hash. Which outcome each one reaches is chosen by the test
// values in TestValues. Delays are measured on the sandbox clock, so a test
// with an injected Config.Now drives the autopilot with Advance and never
// sleeps. A zero delay means its documented default.
//
// The expiry of unpaid payments at valid_until is not the autopilot's: it
// happens with or without it.
type Autopilot struct {
	// Enabled turns the autopilot on. Off, nothing moves by itself except
	// the expiry of unpaid payments at valid_until.
	Enabled bool
	// PayerDelay is how long after creation a payer "presses I paid" by
	// itself for an amount whose test value says so; default
	// DefaultPayerDelay.
	PayerDelay time.Duration
	// VerifyDelay is how long a confirmed (PROCESSING) payment waits for
	// its verification; default DefaultVerifyDelay.
	VerifyDelay time.Duration
	// ReviewDelay is how long an opened dispute waits for its review;
	// default DefaultReviewDelay.
	ReviewDelay time.Duration
	// PayoutDelay is the time of each payout step (pending -> processing,
	// processing -> final); default DefaultPayoutDelay.
	PayoutDelay time.Duration
	// WithdrawalDelay is the time of each withdrawal step (pending ->
	// processing, processing -> final); default DefaultWithdrawalDelay.
	WithdrawalDelay time.Duration
	// IgnoreTestValues gives every resource its default outcome (verified,
	// approved, completed) and never answers PAY_004 by amount: for a team
	// whose real staging amounts or requisites happen to match a test value.
	IgnoreTestValues bool
}

// Default autopilot delays, short enough for a staging test to wait for
// and long enough for a person watching the dashboard to see each status.
const (
	DefaultPayerDelay      = 5 * time.Second
	DefaultVerifyDelay     = 10 * time.Second
	DefaultReviewDelay     = 30 * time.Second
	DefaultPayoutDelay     = 10 * time.Second
	DefaultWithdrawalDelay = 10 * time.Second
)

// WithDefaults returns a with every zero (or negative) delay replaced by
// its default: the delays a Server with this configuration uses.
func (a Autopilot) WithDefaults() Autopilot {
	orDefault(&a.PayerDelay, DefaultPayerDelay)
	orDefault(&a.VerifyDelay, DefaultVerifyDelay)
	orDefault(&a.ReviewDelay, DefaultReviewDelay)
	orDefault(&a.PayoutDelay, DefaultPayoutDelay)
	orDefault(&a.WithdrawalDelay, DefaultWithdrawalDelay)
	return a
}

// pilot schedules autopilot steps on the sandbox clock. A step acts only
// through the Server's own controls (VerifyPayment, ReviewDispute,
// SetPayoutStatus, SetWithdrawalStatus, payerPaid), so the autopilot is no
// second copy of the state machine, and a step whose resource moved on
// meanwhile (a control, a Reset, an expiry) finds its control refused and
// does nothing.
//
// Locks: the hooks are called by the state machine with s.mu held and take
// only p.mu; steps run with neither held. So the order is always s.mu, then
// p.mu, and p.mu is never held while asking for s.mu.
//
// Timing follows expiry's: with the real clock one timer is armed at the
// earliest due step (not one per step, not a poll); with an injected clock
// Advance runs what is due. Every request also runs what is due first, so
// a read made after a step's time always sees the step done.
type pilot struct {
	s         *Server
	cfg       Autopilot
	realClock bool

	mu     sync.Mutex
	q      stepHeap
	seq    uint64
	base   time.Time   // due time of the step being run; zero when none runs
	timer  *time.Timer // real clock only
	closed bool

	runMu sync.Mutex // one runner at a time, so Advance returns with its steps done
}

type step struct {
	due time.Time
	seq uint64 // ties run in scheduling order
	do  func(*Server)
}

type stepHeap []step

func (h stepHeap) Len() int { return len(h) }
func (h stepHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h stepHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *stepHeap) Push(x any)   { *h = append(*h, x.(step)) }
func (h *stepHeap) Pop() any {
	old := *h
	st := old[len(old)-1]
	old[len(old)-1] = step{}
	*h = old[:len(old)-1]
	return st
}

// newPilot returns nil when the autopilot is off: every method is a no-op
// on a nil pilot.
func newPilot(s *Server, cfg Autopilot, realClock bool) *pilot {
	if !cfg.Enabled {
		return nil
	}
	return &pilot{s: s, cfg: cfg.WithDefaults(), realClock: realClock}
}

// close stops the timer and waits for a run in progress: no step runs
// after Server.Close returns.
func (p *pilot) close() {
	if p == nil {
		return
	}
	p.runMu.Lock() // waits for the running step
	defer p.runMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
}

// clear drops every scheduled step (Reset). Called with s.mu held.
func (p *pilot) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.q = nil
}

// after schedules do at d after now on the sandbox clock, or after the due
// time of the step being run: a chain of steps (processing, then
// completed) keeps its spacing, so one Advance over the whole chain runs
// all of it. (A hook fired by a request while a step runs is timed from
// that step too: a few milliseconds early at most with the real clock.)
func (p *pilot) after(now time.Time, d time.Duration, do func(*Server)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	running := !p.base.IsZero()
	if running {
		now = p.base
	}
	p.seq++
	heap.Push(&p.q, step{due: now.Add(d), seq: p.seq, do: do})
	if !running { // a run re-arms the timer when it ends
		p.armLocked(now)
	}
}

// armLocked sets the one timer to the earliest due step (real clock only).
func (p *pilot) armLocked(now time.Time) {
	if !p.realClock || p.closed || len(p.q) == 0 {
		return
	}
	d := p.q[0].due.Sub(now)
	if p.timer == nil {
		p.timer = time.AfterFunc(d, func() { p.run(p.s.Now()) })
		return
	}
	p.timer.Reset(d)
}

// run performs every step due at now, in due order, including steps that
// running steps schedule within now. A step's error is dropped on purpose:
// a resource that moved on (a control, Reset, expiry) has nothing left to
// do. It is called without s.mu held.
func (p *pilot) run(now time.Time) {
	if p == nil {
		return
	}
	p.runMu.Lock()
	defer p.runMu.Unlock()
	for {
		p.mu.Lock()
		if p.closed || len(p.q) == 0 || p.q[0].due.After(now) {
			p.base = time.Time{}
			p.mu.Unlock()
			break
		}
		st := heap.Pop(&p.q).(step)
		p.base = st.due
		p.mu.Unlock()
		st.do(p.s)
	}
	later := p.s.Now() // before p.mu: s.mu is never asked for under p.mu
	p.mu.Lock()
	p.armLocked(later)
	p.mu.Unlock()
}

// runDue is run for callers on the request path: it returns at once,
// without waiting for another runner, when no step is due, so that a
// request costs one uncontended lock while the autopilot idles.
func (p *pilot) runDue(now time.Time) {
	p.mu.Lock()
	due := len(p.q) > 0 && !p.q[0].due.After(now)
	p.mu.Unlock()
	if due {
		p.run(now)
	}
}

// pending counts the steps not yet run.
func (p *pilot) pending() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.q)
}

// AutopilotPending returns how many autopilot steps are scheduled and not
// yet run (0 with the autopilot off): a staging check can wait for it to
// reach 0 instead of sleeping.
func (s *Server) AutopilotPending() int { return s.pilot.pending() }

// The hooks below are the autopilot's only contact with the state machine:
// one call where each event happens, with s.mu held, carrying plain values
// (never a pointer into the state), so the state can live anywhere.

// paymentCreated lets the payer press "I paid" by itself when the amount
// says so.
func (p *pilot) paymentCreated(now time.Time, id string, amount decimal.Decimal) {
	if p == nil || p.paymentOutcome(amount) != tvPayerConfirms {
		return
	}
	p.after(now, p.cfg.PayerDelay, func(s *Server) { _ = s.payerPaid(id) })
}

// paymentEntered schedules the verification of a confirmed payment and the
// review of an opened dispute. comment is the dispute's.
func (p *pilot) paymentEntered(now time.Time, id, status string, amount decimal.Decimal, comment string) {
	if p == nil {
		return
	}
	switch status {
	case statusProcessing:
		outcome := OutcomeCompleted
		switch p.paymentOutcome(amount) {
		case tvNotFound:
			outcome = OutcomeCancelled
		case tvStaysProcessing:
			return
		}
		p.after(now, p.cfg.VerifyDelay, func(s *Server) { _ = s.VerifyPayment(id, outcome) })
	case statusDispute:
		outcome := p.disputeOutcome(comment)
		p.after(now, p.cfg.ReviewDelay, func(s *Server) { _ = s.ReviewDispute(id, outcome) })
	}
}

// payoutEntered plays the provider: a new payout is taken into processing
// after one delay, and a processing one (whoever moved it there) reaches
// the final status its requisites choose after another.
func (p *pilot) payoutEntered(now time.Time, id, status, requisites string) {
	if p == nil {
		return
	}
	next := ""
	switch status {
	case PayoutPending:
		next = PayoutProcessing
	case PayoutProcessing:
		next = p.payoutOutcome(requisites)
	default:
		return
	}
	p.after(now, p.cfg.PayoutDelay, func(s *Server) { _ = s.SetPayoutStatus(id, next) })
}

// withdrawalEntered plays the blockchain the same way: processing after
// one delay, then completed (SetWithdrawalStatus generates the tx_hash) or
// failed, by the address.
func (p *pilot) withdrawalEntered(now time.Time, id, status, address string) {
	if p == nil {
		return
	}
	next := ""
	switch status {
	case WithdrawalPending:
		next = WithdrawalProcessing
	case WithdrawalProcessing:
		next = p.withdrawalOutcome(address)
	default:
		return
	}
	p.after(now, p.cfg.WithdrawalDelay, func(s *Server) { _ = s.SetWithdrawalStatus(id, next, "") })
}

// inFlight is one resource the autopilot still has to move, as
// inFlightLocked reports it.
type inFlight struct {
	kind    string // "payment", "payout" or "withdrawal"
	id      string
	status  string
	amount  decimal.Decimal // payments
	comment string          // a payment's dispute comment
	detail  string          // a payout's requisites, a withdrawal's address
}

// inFlightLocked lists every payment, payout and withdrawal not yet in a
// final status. It is the autopilot's ONLY direct read of the state (for
// resume); a persistent store answers it with one query per kind.
func (s *Server) inFlightLocked() []inFlight {
	return s.st.inFlight()
}

func appendInFlightPayment(out []inFlight, pm *payment) []inFlight {
	switch pm.status {
	case statusPending, statusProcessing, statusDispute:
		f := inFlight{kind: "payment", id: pm.id, status: pm.status, amount: pm.amount}
		if pm.dispute != nil {
			f.comment = pm.dispute.comment
		}
		out = append(out, f)
	}
	return out
}

func appendInFlightPayout(out []inFlight, po *payout) []inFlight {
	if po.status == PayoutPending || po.status == PayoutProcessing {
		out = append(out, inFlight{kind: "payout", id: po.id, status: po.status, detail: po.requisites})
	}
	return out
}

func appendInFlightWithdrawal(out []inFlight, w *withdrawal) []inFlight {
	if w.status == WithdrawalPending || w.status == WithdrawalProcessing {
		out = append(out, inFlight{kind: "withdrawal", id: w.id, status: w.status, detail: w.address})
	}
	return out
}

// resume schedules the next step of every resource already in flight, a
// full delay from now: steps live in memory only, so a sandbox restarted
// on a persistent store (or given the autopilot over existing state) still
// moves everything along. New calls it once the state is there.
func (p *pilot) resume() {
	if p == nil {
		return
	}
	s := p.s
	s.begin()
	defer s.commit()
	now := s.nowLocked()
	for _, f := range s.inFlightLocked() {
		switch f.kind {
		case "payment":
			if f.status == statusPending {
				p.paymentCreated(now, f.id, f.amount)
			} else {
				p.paymentEntered(now, f.id, f.status, f.amount, f.comment)
			}
		case "payout":
			p.payoutEntered(now, f.id, f.status, f.detail)
		case "withdrawal":
			p.withdrawalEntered(now, f.id, f.status, f.detail)
		}
	}
}
