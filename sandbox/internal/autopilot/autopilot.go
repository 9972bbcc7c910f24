// Package autopilot moves the sandbox's resources along by themselves, the
// way the service would: it schedules steps on the sandbox clock and acts
// only through a Target, the Server's own controls, so it is no second copy
// of the state machine. The test values (testvalues.go) choose each
// resource's outcome; the one that refuses a payment at creation (404.04)
// is asked by the ledger's creation rule through RefuseCreate, which
// sandbox/internal/service passes as ledger.Env.Refuse. The service is the
// Target; this package never imports it.
package autopilot

import (
	"container/heap"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/control"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Config is the autopilot's configuration; package sandbox publishes it as
// Autopilot (Config.Autopilot). Delays are measured on the sandbox clock,
// so a test with an injected clock drives the autopilot with Advance and
// never sleeps. A zero delay means its documented default.
type Config struct {
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
func (a Config) WithDefaults() Config {
	orDefault(&a.PayerDelay, DefaultPayerDelay)
	orDefault(&a.VerifyDelay, DefaultVerifyDelay)
	orDefault(&a.ReviewDelay, DefaultReviewDelay)
	orDefault(&a.PayoutDelay, DefaultPayoutDelay)
	orDefault(&a.WithdrawalDelay, DefaultWithdrawalDelay)
	return a
}

func orDefault(v *time.Duration, d time.Duration) {
	if *v <= 0 {
		*v = d
	}
}

// Target is what the autopilot acts on: the Server's own controls, so a
// step whose resource moved on meanwhile (a control, a Reset, an expiry)
// finds its control refused and does nothing. A step's error is dropped on
// purpose for that reason.
type Target interface {
	// Now is the sandbox clock.
	Now() time.Time
	// PayerPaid is the payer pressing "I paid" on the payment page.
	PayerPaid(id string) error
	// The steps are the control verbs, declared once (a withdrawal's
	// completion generates its tx_hash).
	control.Verbs
	// InFlight calls fn inside one section of the state (its lock held)
	// with the sandbox time and every resource not yet final, so that the
	// steps fn schedules see no change in between.
	InFlight(fn func(now time.Time, inFlight []InFlight))
}

// InFlight is one resource the autopilot still has to move, as the store
// reports it.
type InFlight struct {
	// Kind is "payment", "payout" or "withdrawal".
	Kind string
	// ID is the resource's id.
	ID string
	// Status is its current status.
	Status string
	// Amount is a payment's amount (its test value).
	Amount decimal.Decimal
	// Comment is a payment's dispute comment.
	Comment string
	// Detail is a payout's requisites or a withdrawal's address.
	Detail string
}

// Pilot schedules autopilot steps on the sandbox clock.
//
// Locks: the hooks are called by the state machine with its lock held and
// take only p.mu; steps run with neither held. So the order is always the
// state's lock, then p.mu, and p.mu is never held while asking for the
// state's lock.
//
// Timing follows expiry's: with the real clock one timer is armed at the
// earliest due step (not one per step, not a poll); with an injected clock
// the Server's Advance runs what is due. Every request also runs what is
// due first, so a read made after a step's time always sees the step done.
//
// A nil *Pilot is the autopilot off: every method is a no-op.
type Pilot struct {
	t         Target
	cfg       Config
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
	do  func(Target)
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

// New returns nil when the autopilot is off: every method is a no-op on a
// nil Pilot. realClock arms a timer; otherwise only Run moves steps.
func New(t Target, cfg Config, realClock bool) *Pilot {
	if !cfg.Enabled {
		return nil
	}
	return &Pilot{t: t, cfg: cfg.WithDefaults(), realClock: realClock}
}

// Config is the configuration the pilot runs with, defaults applied (the
// dashboard's texts say its delays).
func (p *Pilot) Config() Config {
	if p == nil {
		return Config{}
	}
	return p.cfg
}

// Close stops the timer and waits for a run in progress: no step runs
// after Close returns.
func (p *Pilot) Close() {
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

// Clear drops every scheduled step (Reset). Called with the state's lock
// held.
func (p *Pilot) Clear() {
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
func (p *Pilot) after(now time.Time, d time.Duration, do func(Target)) {
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
func (p *Pilot) armLocked(now time.Time) {
	if !p.realClock || p.closed || len(p.q) == 0 {
		return
	}
	d := p.q[0].due.Sub(now)
	if p.timer == nil {
		p.timer = time.AfterFunc(d, func() { p.Run(p.t.Now()) })
		return
	}
	p.timer.Reset(d)
}

// Run performs every step due at now, in due order, including steps that
// running steps schedule within now. A step's error is dropped on purpose:
// a resource that moved on (a control, Reset, expiry) has nothing left to
// do. It is called without the state's lock held.
func (p *Pilot) Run(now time.Time) {
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
		st.do(p.t)
	}
	later := p.t.Now() // before p.mu: the state's lock is never asked for under p.mu
	p.mu.Lock()
	p.armLocked(later)
	p.mu.Unlock()
}

// RunDue is Run for callers on the request path: it returns at once,
// without waiting for another runner, when no step is due, so that a
// request costs one uncontended lock while the autopilot idles.
func (p *Pilot) RunDue(now time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	due := len(p.q) > 0 && !p.q[0].due.After(now)
	p.mu.Unlock()
	if due {
		p.Run(now)
	}
}

// Pending counts the steps not yet run.
func (p *Pilot) Pending() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.q)
}

// The hooks below are the autopilot's only contact with the state machine:
// one call where each event happens, with the state's lock held, carrying
// plain values (never a pointer into the state), so the state can live
// anywhere.

// PaymentCreated lets the payer press "I paid" by itself when the amount
// says so.
func (p *Pilot) PaymentCreated(now time.Time, id string, amount decimal.Decimal) {
	if p == nil || p.paymentOutcome(amount) != tvPayerConfirms {
		return
	}
	p.after(now, p.cfg.PayerDelay, func(t Target) { _ = t.PayerPaid(id) })
}

// PaymentEntered schedules the verification of a confirmed payment and the
// review of an opened dispute. comment is the dispute's.
func (p *Pilot) PaymentEntered(now time.Time, id, status string, amount decimal.Decimal, comment string) {
	if p == nil {
		return
	}
	switch status {
	case ledger.PaymentProcessing:
		outcome := ledger.OutcomeCompleted
		switch p.paymentOutcome(amount) {
		case tvNotFound:
			outcome = ledger.OutcomeCancelled
		case tvStaysProcessing:
			return
		}
		p.after(now, p.cfg.VerifyDelay, func(t Target) { _, _ = t.VerifyPayment(id, outcome) })
	case ledger.PaymentDispute:
		outcome := p.disputeOutcome(comment)
		p.after(now, p.cfg.ReviewDelay, func(t Target) { _, _ = t.ReviewDispute(id, outcome) })
	}
}

// PayoutEntered plays the provider: a new payout is taken into processing
// after one delay, and a processing one (whoever moved it there) reaches
// the final status its requisites choose after another.
func (p *Pilot) PayoutEntered(now time.Time, id, status, requisites string) {
	if p == nil {
		return
	}
	next := providerStep(status, ledger.PayoutPending, ledger.PayoutProcessing, func() string { return p.payoutOutcome(requisites) })
	if next != "" {
		p.after(now, p.cfg.PayoutDelay, func(t Target) { _, _ = t.SetPayoutStatus(id, next) })
	}
}

// WithdrawalEntered plays the blockchain the same way: processing after
// one delay, then completed (the Target generates the tx_hash) or failed,
// by the address.
func (p *Pilot) WithdrawalEntered(now time.Time, id, status, address string) {
	if p == nil {
		return
	}
	next := providerStep(status, ledger.WithdrawalPending, ledger.WithdrawalProcessing, func() string { return p.withdrawalOutcome(address) })
	if next != "" {
		p.after(now, p.cfg.WithdrawalDelay, func(t Target) { _, _ = t.SetWithdrawalStatus(id, next, "") })
	}
}

// providerStep is the status a provider moves a resource in status to:
// processing from pending, the final status final chooses from
// processing, and "" (no step) from anything else.
func providerStep(status, pending, processing string, final func() string) string {
	switch status {
	case pending:
		return processing
	case processing:
		return final()
	}
	return ""
}

// Resume schedules the next step of every resource already in flight, a
// full delay from now: steps live in memory only, so a sandbox restarted
// on a persistent store (or given the autopilot over existing state) still
// moves everything along. The Server calls it once the state is there.
func (p *Pilot) Resume() {
	if p == nil {
		return
	}
	p.t.InFlight(func(now time.Time, inFlight []InFlight) {
		for _, f := range inFlight {
			switch f.Kind {
			case "payment":
				if f.Status == ledger.PaymentPending {
					p.PaymentCreated(now, f.ID, f.Amount)
				} else {
					p.PaymentEntered(now, f.ID, f.Status, f.Amount, f.Comment)
				}
			case "payout":
				p.PayoutEntered(now, f.ID, f.Status, f.Detail)
			case "withdrawal":
				p.WithdrawalEntered(now, f.ID, f.Status, f.Detail)
			}
		}
	})
}
