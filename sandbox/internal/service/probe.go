package service

import (
	"net/http"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/feed"

	"github.com/paykit-dev/paykit-go/sandbox/internal/autopilot"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
)

// Probe reaches into a Service for package sandbox's tests, which drive
// the Server over HTTP and check what they cannot see from outside (the
// group commit's syncs, a store that fails its next commit). No program
// uses it.
type Probe struct{ s *Service }

// Probe returns the Service's probe.
func (s *Service) Probe() Probe { return Probe{s} }

// Lock takes the Service's lock (for Store, SetStore and LastCommit).
func (p Probe) Lock() { p.s.mu.Lock() }

// Unlock releases it.
func (p Probe) Unlock() { p.s.mu.Unlock() }

// Store is the store (under Lock).
func (p Probe) Store() storage.Store { return p.s.st.core }

// SetStore replaces the store (under Lock); changed is called whenever a
// section changes the clock offset, which commits with the resources.
func (p Probe) SetStore(st storage.Store, changed func()) {
	p.s.st.core = st
	p.s.jr = offsetWatch{journal: p.s.jr, changed: changed}
}

// offsetWatch is a journal that reports a change of the clock offset.
type offsetWatch struct {
	journal
	changed func()
}

func (j offsetWatch) saveOffset(d time.Duration) { j.changed(); j.journal.saveOffset(d) }

// WrapSync wraps the group commit's sync of the -wal file; put undoes it.
func (p Probe) WrapSync(wrap func(real func() error) func() error) (put func()) {
	g := &p.s.grp
	g.mu.Lock()
	defer g.mu.Unlock()
	real := g.sync
	g.sync = wrap(real)
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.sync = real
	}
}

// Syncs is how many syncs of the -wal file were made.
func (p Probe) Syncs() int {
	p.s.grp.mu.Lock()
	defer p.s.grp.mu.Unlock()
	return p.s.grp.syncs
}

// Waiting is how many sections wait for a sync.
func (p Probe) Waiting() int {
	p.s.grp.mu.Lock()
	defer p.s.grp.mu.Unlock()
	return p.s.grp.waiting
}

// Entering is how many sections wait to take the lock.
func (p Probe) Entering() int32 { return p.s.grp.entering.Load() }

// LastCommit is the SQL store's last commit of a change (under Lock).
func (p Probe) LastCommit() uint64 { return p.s.grp.st.LastCommit() }

// ReplacePilot puts a new autopilot with cfg in place (no request may be
// in flight) and returns it.
func (p Probe) ReplacePilot(cfg autopilot.Config) *autopilot.Pilot {
	p.s.pilot = autopilot.New(p.s, cfg, false)
	p.s.refuse = p.s.pilot.RefuseCreate
	return p.s.pilot
}

// Counters is how many request counters are kept.
func (p Probe) Counters() int {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return len(p.s.requests)
}

// Patterns are the API's routes.
func (p Probe) Patterns() []string { return p.s.api.Patterns() }

// SetExpiryBatch makes expiry commit every n payments; put undoes it.
func SetExpiryBatch(n int) (put func()) {
	old := expiryBatch
	expiryBatch = n
	return func() { expiryBatch = old }
}

// Begin opens a section (takes the lock as a request does).
func (p Probe) Begin() { p.s.begin() }

// Commit ends it.
func (p Probe) Commit() { p.s.commit() }

// Mux is the Service's routes.
func (p Probe) Mux() *http.ServeMux { return p.s.mux }

// Self is the set of addresses webhooks never dial.
func (p Probe) Self() *SelfAddrs { return p.s.cfg.Self }

// Feed is the merchants' listen feed.
func (p Probe) Feed() *feed.Hub[feed.Notification] { return p.s.feed }

// Open is how many sections left their changes in the open transaction.
func (p Probe) Open() int {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return p.s.grp.open
}
