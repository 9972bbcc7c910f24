package sandbox

import (
	"container/heap"
	"sync"
	"time"
)

// Autopilot moves resources along by themselves, the way the service
// would, so that a staging backend needs no one to press buttons: a
// confirmed payment is verified, an opened dispute is reviewed, a payout
// goes pending -> processing -> a final status, a withdrawal completes with
// a generated tx_hash. Which outcome each one reaches is chosen by the test
// values in TestValues. Delays are measured on the sandbox clock, so a test
// with an injected Config.Now drives the autopilot with Advance and never
// sleeps. A zero delay means its documented default.
type Autopilot struct {
	// Enabled turns the autopilot on. Off, nothing moves by itself except
	// the expiry of unpaid payments at valid_until.
	Enabled bool `json:"enabled"`
	// PayerDelay is how long after creation a payer "presses I paid" by
	// itself for an amount whose test value says so; default
	// DefaultPayerDelay.
	PayerDelay time.Duration `json:"payer_delay"`
	// VerifyDelay is how long a confirmed (PROCESSING) payment waits for
	// its verification; default DefaultVerifyDelay.
	VerifyDelay time.Duration `json:"verify_delay"`
	// ReviewDelay is how long an opened dispute waits for its review;
	// default DefaultReviewDelay.
	ReviewDelay time.Duration `json:"review_delay"`
	// PayoutDelay is the time of each payout step (pending -> processing,
	// processing -> final); default DefaultPayoutDelay.
	PayoutDelay time.Duration `json:"payout_delay"`
	// WithdrawalDelay is the time of each withdrawal step (pending ->
	// processing, processing -> final); default DefaultWithdrawalDelay.
	WithdrawalDelay time.Duration `json:"withdrawal_delay"`
	// IgnoreTestValues gives every resource its default outcome (verified,
	// approved, completed) and never answers PAY_004 by amount: for a team
	// whose real staging amounts or requisites happen to match a test value.
	IgnoreTestValues bool `json:"ignore_test_values"`
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

func (a Autopilot) withDefaults() Autopilot {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&a.PayerDelay, DefaultPayerDelay)
	def(&a.VerifyDelay, DefaultVerifyDelay)
	def(&a.ReviewDelay, DefaultReviewDelay)
	def(&a.PayoutDelay, DefaultPayoutDelay)
	def(&a.WithdrawalDelay, DefaultWithdrawalDelay)
	return a
}

// pilotPoll is how often the real-clock autopilot looks for due steps. A
// poll instead of one timer per step keeps the pilot one goroutine however
// many resources wait, and a step late by at most this is still "like the
// service".
const pilotPoll = 100 * time.Millisecond

// pilot schedules autopilot steps on the sandbox clock. Steps act only
// through the Server's own controls (VerifyPayment, SetPayoutStatus, ...),
// so the autopilot is no second copy of the state machine. Hooks are
// called with s.mu held, so the pilot has its own lock and never takes
// s.mu itself; steps run with neither lock held.
type pilot struct {
	s   *Server
	cfg Autopilot

	mu   sync.Mutex
	q    stepHeap
	seq  uint64
	base time.Time // due time of the running step; zero when none runs

	runMu sync.Mutex // one runner at a time, so Advance sees its steps done
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

type step struct {
	due time.Time
	seq uint64
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
	*h = old[:len(old)-1]
	return st
}

// newPilot returns nil when the autopilot is off: every hook is a no-op on
// a nil pilot. With it on, a goroutine runs due steps every pilotPoll
// until close; Advance also runs them at once, so tests with a frozen
// clock need no wait.
func newPilot(s *Server, cfg Autopilot) *pilot {
	if !cfg.Enabled {
		return nil
	}
	p := &pilot{s: s, cfg: cfg.withDefaults(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(pilotPoll)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.run(s.Now())
			}
		}
	}()
	return p
}

func (p *pilot) close() {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

// after schedules do at d after now on the sandbox clock, or after the
// due time of the step being run: a chain of steps (processing, then
// completed) keeps its spacing, so one Advance over the whole chain runs
// all of it.
func (p *pilot) after(now time.Time, d time.Duration, do func(*Server)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.base.IsZero() {
		now = p.base
	}
	p.seq++
	heap.Push(&p.q, step{due: now.Add(d), seq: p.seq, do: do})
}

// run performs every step due at now, in due order, including steps that
// running steps schedule within now. Errors are dropped on purpose: a step
// whose resource moved on (a control, Reset) has nothing left to do.
func (p *pilot) run(now time.Time) {
	if p == nil {
		return
	}
	p.runMu.Lock()
	defer p.runMu.Unlock()
	for {
		p.mu.Lock()
		if len(p.q) == 0 || p.q[0].due.After(now) {
			p.base = time.Time{}
			p.mu.Unlock()
			return
		}
		st := heap.Pop(&p.q).(step)
		p.base = st.due
		p.mu.Unlock()
		st.do(p.s)
	}
}

// pending counts the steps not yet run; the dashboard and tests read it.
func (p *pilot) pending() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.q)
}

// The hooks below are the autopilot's only contact with the state
// machine: each is one call where the event happens, with s.mu held.

// paymentCreated lets the payer press "I paid" by itself when the amount
// says so.
func (p *pilot) paymentCreated(now time.Time, pm *payment) {
	if p == nil || p.paymentTestOutcome(pm.amount) != tvPayerConfirms {
		return
	}
	id := pm.id
	p.after(now, p.cfg.PayerDelay, func(s *Server) { _ = s.payerConfirm(id) })
}

// paymentStatus schedules the verification of a confirmed payment and the
// review of an opened dispute.
func (p *pilot) paymentStatus(now time.Time, pm *payment, status string) {
	if p == nil {
		return
	}
	id := pm.id
	switch status {
	case statusProcessing:
		outcome := OutcomeCompleted
		switch p.paymentTestOutcome(pm.amount) {
		case tvNotFound:
			outcome = OutcomeCancelled
		case tvStaysProcessing:
			return
		}
		p.after(now, p.cfg.VerifyDelay, func(s *Server) { _ = s.VerifyPayment(id, outcome) })
	case statusDispute:
		comment := ""
		if pm.dispute != nil {
			comment = pm.dispute.comment
		}
		outcome := p.disputeTestOutcome(comment)
		p.after(now, p.cfg.ReviewDelay, func(s *Server) { _ = s.ReviewDispute(id, outcome) })
	}
}

// payoutCreated plays the provider: processing after one delay, the final
// status chosen by the requisites after another.
func (p *pilot) payoutCreated(now time.Time, po *payout) {
	if p == nil {
		return
	}
	id, final, d := po.id, p.payoutTestOutcome(po.requisites), p.cfg.PayoutDelay
	p.after(now, d, func(s *Server) {
		if s.SetPayoutStatus(id, PayoutProcessing) == nil {
			p.after(s.Now(), d, func(s *Server) { _ = s.SetPayoutStatus(id, final) })
		}
	})
}

// withdrawalCreated plays the blockchain: processing after one delay,
// completed (with a generated tx_hash) or failed, by the address, after
// another.
func (p *pilot) withdrawalCreated(now time.Time, w *withdrawal) {
	if p == nil {
		return
	}
	id, final, d := w.id, p.withdrawalTestOutcome(w.address), p.cfg.WithdrawalDelay
	p.after(now, d, func(s *Server) {
		if s.SetWithdrawalStatus(id, WithdrawalProcessing, "") == nil {
			p.after(s.Now(), d, func(s *Server) { _ = s.SetWithdrawalStatus(id, final, "") })
		}
	})
}

// resume schedules the steps of every resource already in flight, each a
// full delay from now: steps live in memory only, so a sandbox restarted
// on a persistent store (or started with the autopilot switched on over
// existing state) still moves everything along. New calls it once the
// state is loaded.
func (p *pilot) resume() {
	if p == nil {
		return
	}
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowLocked()
	for _, pm := range s.payments {
		switch pm.status {
		case statusPending:
			p.paymentCreated(now, pm)
		case statusProcessing, statusDispute:
			p.paymentStatus(now, pm, pm.status)
		}
	}
	for _, po := range s.payouts {
		switch po.status {
		case PayoutPending:
			p.payoutCreated(now, po)
		case PayoutProcessing:
			id, final := po.id, p.payoutTestOutcome(po.requisites)
			p.after(now, p.cfg.PayoutDelay, func(s *Server) { _ = s.SetPayoutStatus(id, final) })
		}
	}
	for _, w := range s.withdrawals {
		switch w.status {
		case WithdrawalPending:
			p.withdrawalCreated(now, w)
		case WithdrawalProcessing:
			id, final := w.id, p.withdrawalTestOutcome(w.address)
			p.after(now, p.cfg.WithdrawalDelay, func(s *Server) { _ = s.SetWithdrawalStatus(id, final, "") })
		}
	}
}

// payerConfirm is the payer pressing "I paid" without a receipt: the same
// transition as POST /v1/payments/{id}/confirm.
func (s *Server) payerConfirm(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tickLocked()
	pm, err := s.paymentInLocked(id, statusPending)
	if err != nil {
		return err
	}
	if aerr := s.confirmLocked(pm, 0); aerr != nil {
		return ErrWrongState
	}
	return nil
}

// AutopilotPending returns how many autopilot steps are scheduled and not
// yet run (0 with the autopilot off): a staging check can wait for it to
// reach 0 instead of sleeping.
func (s *Server) AutopilotPending() int { return s.pilot.pending() }
