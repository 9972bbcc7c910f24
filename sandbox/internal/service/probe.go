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

// Store is the store sections run over.
func (p Probe) Store() storage.Store { return p.s.grp.Store() }

// WrapStore replaces the store with what wrap returns, under the lock;
// when wrap returns a changed func too, it is called whenever a section
// changes the clock offset, which commits with the resources.
func (p Probe) WrapStore(wrap func(storage.Store) (storage.Store, func())) {
	p.s.grp.WrapStore(func(st storage.Store) storage.Store {
		st, changed := wrap(st)
		if changed != nil {
			p.s.jr = offsetWatch{journal: p.s.jr, changed: changed}
		}
		return st
	})
}

// offsetWatch is a journal that reports a change of the clock offset.
type offsetWatch struct {
	journal
	changed func()
}

func (j offsetWatch) saveOffset(d time.Duration) { j.changed(); j.journal.saveOffset(d) }

// WrapSync wraps the group commit's sync of the -wal file; put undoes it.
func (p Probe) WrapSync(wrap func(real func() error) func() error) (put func()) {
	return p.s.grp.WrapSync(wrap)
}

// Syncs is how many syncs of the -wal file were made.
func (p Probe) Syncs() int { return p.s.grp.Syncs() }

// Waiting is how many sections wait for a sync.
func (p Probe) Waiting() int { return p.s.grp.Waiting() }

// Entering is how many sections wait to take the lock.
func (p Probe) Entering() int32 { return p.s.grp.Entering() }

// LastCommit is the SQL store's last commit of a change.
func (p Probe) LastCommit() uint64 { return p.s.grp.LastCommit() }

// ReplacePilot puts a new autopilot with cfg in place (no request may be
// in flight) and returns it.
func (p Probe) ReplacePilot(cfg autopilot.Config) *autopilot.Pilot {
	p.s.pilot = autopilot.New(p.s, cfg, false)
	p.s.refuse = p.s.pilot.RefuseCreate
	return p.s.pilot
}

// Counters is how many request counters are kept.
func (p Probe) Counters() int {
	p.s.reqMu.Lock()
	defer p.s.reqMu.Unlock()
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
func (p Probe) Open() int { return p.s.grp.Open() }
