package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// heldHook is a webhook a section decided to send: it is queued for
// delivery only once the section has committed, so no receiver hears of a
// change the store then failed to keep.
type heldHook struct {
	key string
	dl  delivery
}

// ErrStore is wrapped by the errors of a store that cannot be used: a
// commit that failed (disk full, the file removed or damaged underneath).
// After one the Server answers every request 503 SANDBOX_STORE and /readyz
// 503, because what it holds in memory may no longer match the file;
// restarting it on the same file resumes from the last committed state.
var ErrStore = errors.New("sandbox: the database cannot be used")

// begin opens a section: it takes the Server's lock, and everything the
// rules change until commit is one transaction of the store.
func (s *Server) begin() {
	if !s.grp.on {
		s.mu.Lock()
		return
	}
	s.grp.entering.Add(1) // seen by the section before: it may leave its commit to this one
	s.mu.Lock()
	s.grp.entering.Add(-1)
}

// lock takes the Server's lock outside a section, to read its memory or
// note a diagnostic: counted as begin counts, so that a section ending
// meanwhile may leave its commit to the group; unlock then commits that
// group when nobody else is coming to.
func (s *Server) lock() { s.begin() }

func (s *Server) unlock() {
	if s.grp.done != nil && s.grp.entering.Load() == 0 {
		s.checkpointLocked()
	}
	s.mu.Unlock()
}

// commit ends the section. Its answer is written only once what it
// changed, and what it read of others' changes, is committed: by this
// section, or by a later one (groupCommit). Then the webhooks held are
// released, and the lock.
func (s *Server) commit() {
	g := &s.grp
	if g.on && s.storeErr == nil && g.entering.Load() > 0 && g.n < maxGroup-1 {
		if e := s.st.end(); e.pending {
			if !e.depends {
				s.mu.Unlock() // it read only what is committed: its answer need not wait
				return
			}
			if g.done == nil {
				g.done = make(chan struct{})
			}
			g.n++
			done := g.done
			s.mu.Unlock()
			<-done // closed by checkpointLocked, after storeErr tells the outcome
			return
		}
	}
	s.checkpointLocked()
	s.mu.Unlock()
}

// groupCommit lets sections share one commit, and so one fsync, of a
// store whose commit reaches the disk (Config.DBPath). A section that ends
// while others wait in begin (they arrived during the previous commit)
// leaves its changes in the open transaction and waits: the last of them,
// the one that finds nobody waiting, or the maxGroup-th, commits for all,
// and its outcome is theirs. No answer is written before the commit
// covering it returns (synchronous=FULL stays: a 2xx survives power loss),
// and a failed commit fails every section in it (storeErr), memory going
// back to the previous commit (keptState). A section that only read waits
// as well when it read one of those changes, or when they touch the
// Server's own memory (terminals, clock, faults), whose reads the store
// cannot see: nothing is visible before it is committed.
type groupCommit struct {
	on       bool          // set by openStore before the Server is shared: the store's commits sync
	entering atomic.Int32  // sections waiting in begin
	done     chan struct{} // under mu: closed when the open transaction's commit ends; nil: nobody waits
	n        int           // under mu: sections waiting for it
}

// maxGroup bounds the sections one commit covers, so that a steady stream
// of requests (someone is always waiting in begin) still commits, and the
// first section of a group is not kept waiting for long.
const maxGroup = 64

// checkpointLocked commits what the section did so far and sends its held
// webhooks; the section may go on (expiry of a long backlog commits in
// batches). When the commit fails, or a commit failed before, the store
// rolls the section back and the Server's own memory (terminals, transfer
// counters, clock offset, faults) goes back to the last commit: nothing a
// 503 answered is visible anywhere, not in /sandbox/state, the dashboard or
// Server.Terminals.
func (s *Server) checkpointLocked() {
	var err error
	if s.storeErr != nil {
		s.st.rollback() // the store failed: nothing more is kept until a restart
	} else if err = s.st.commit(); err != nil {
		s.st.rollback()
		s.storeErr = fmt.Errorf("%w: %v", ErrStore, err)
		if l := s.cfg.Logger; l != nil {
			l.Error("database commit failed: answering 503 until restarted", slog.String("error", err.Error()))
		}
	}
	if s.storeErr == nil {
		for _, h := range s.held {
			s.hooks.queue(h.key, h.dl)
		}
		s.kept.take(s)
	} else {
		s.kept.restore(s)
	}
	clear(s.held)
	s.held = s.held[:0]
	if s.grp.done != nil {
		close(s.grp.done)
		s.grp.done, s.grp.n = nil, 0
	}
}

// keptState is the part of the Server's memory a section may change
// outside the store, as of the last commit: what a failed commit puts
// back. Taken after every commit, reusing its slices (a few terminals and
// faults: no allocation in the steady state).
type keptState struct {
	merchants map[string]*merchant
	terminals []keptTerminal
	transfers []keptTransfers
	offset    time.Duration
	faults    []Fault
}

type keptTerminal struct {
	t *terminal
	v terminal
}

type keptTransfers struct {
	m *merchant
	n int
}

func (k *keptState) take(s *Server) {
	k.merchants, k.offset = s.merchants, s.offset
	k.terminals, k.transfers, k.faults = k.terminals[:0], k.transfers[:0], k.faults[:0]
	for _, m := range s.merchants {
		k.transfers = append(k.transfers, keptTransfers{m: m, n: m.Transfers})
		for _, t := range m.Terminals {
			k.terminals = append(k.terminals, keptTerminal{t: t, v: *t})
		}
	}
	for _, f := range s.faults {
		k.faults = append(k.faults, *f)
	}
}

func (k *keptState) restore(s *Server) {
	if k.merchants == nil {
		return // nothing committed yet: Open fails instead
	}
	s.merchants, s.offset = k.merchants, k.offset
	for _, kt := range k.terminals {
		*kt.t = kt.v
	}
	for _, km := range k.transfers {
		km.m.Transfers = km.n
	}
	s.faults = s.faults[:0]
	for _, f := range k.faults {
		f := f
		s.faults = append(s.faults, &f)
	}
}

// storeFailed returns the error of a failed commit, or nil.
func (s *Server) storeFailed() error {
	s.lock()
	defer s.unlock()
	return s.storeErr
}

// orStoreErr is the error a Go control returns: the store's when it
// failed, else the control's own.
func (s *Server) orStoreErr(err error) error {
	if serr := s.storeFailed(); serr != nil {
		return serr // the control's own answer came from a store that failed
	}
	return err
}

// enqueueLocked sends a webhook of the current section (see outboxLocked).
func (s *Server) enqueueLocked(h hook, target, token string, v any) {
	if key, dl, ok := s.hooks.prepare(h, target, token, v); ok {
		s.outboxLocked(key, dl)
	}
}

// outboxLocked records a delivery in the store's outbox within the current
// section and holds it until the section commits.
func (s *Server) outboxLocked(key string, dl delivery) {
	s.st.outbox(key, dl)
	s.held = append(s.held, heldHook{key: key, dl: dl})
}

// deliveryUpdated is the dispatcher's report of an attempt or an end.
func (s *Server) deliveryUpdated(rec Delivery) {
	s.lock()
	defer s.unlock()
	s.jr.deliveryUpdated(rec)
}

// openStore opens the store Config.DBPath names (or the in-memory one),
// builds the merchants from it and returns the deliveries to restore.
func (s *Server) openStore() ([]storedDelivery, error) {
	path := s.cfg.DBPath
	if path == "" && testDBPath != nil {
		path, s.removeDB = testDBPath()
	}
	if path == "" {
		s.st, s.jr = store{core: newMemStore(s.cfg.Merchants)}, memJournal{}
		s.merchants = s.st.merchants()
		return nil, nil
	}
	st, err := openSQLStore(sqlDeps{merchants: s.cfg.Merchants, logger: s.cfg.Logger, banks: s.banks,
		maxSamePending: s.cfg.MaxSamePendingAmount, merchant: func(k string) *merchant { return s.merchants[k] }}, path)
	if err != nil {
		return nil, err
	}
	s.st, s.jr = store{core: st}, st
	s.grp.on = true
	s.mu.Lock()
	defer s.mu.Unlock()
	s.merchants = st.Merchants()
	r := st.restore()
	s.offset, s.faults, s.requests = r.offset, r.faults, r.counters
	s.reqLog = append(s.reqLog, r.reqLog...)
	if len(s.reqLog) == DefaultRequestLogSize {
		s.reqPos = 0 // the ring is full: its oldest line is the next overwritten
	}
	st.wrote = true // a new file's merchants and terminals
	if err := st.Commit(); err != nil {
		st.Close()
		return nil, openError(path, "%v", err)
	}
	return r.deliveries, nil
}

// testDBPath, when set, gives each Server without Config.DBPath a file of
// its own and the function that removes it after Close. Only the package's
// tests set it (PAYKIT_SANDBOX_TEST_DB=file, in helpers_test.go), so the
// whole suite runs once more on SQLite; a program never does.
var testDBPath func() (path string, remove func())
