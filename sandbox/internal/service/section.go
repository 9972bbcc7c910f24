package service

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/paykit-dev/paykit-go/internal/mask"
	storage "github.com/paykit-dev/paykit-go/sandbox/internal/store"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// heldHook is a webhook a section decided to send: it is queued for
// delivery only once the section has committed, so no receiver hears of a
// change the store then failed to keep.
type heldHook struct {
	key  string
	dl   delivery // none when dl.rec is nil: the change is only for the listen feed
	note heldNote // nothing when merchant is empty
}

// begin opens a section: it takes the Server's lock, and everything the
// rules change until commit is one transaction of the store.
func (s *Service) begin() {
	if s.grp.st == nil {
		s.mu.Lock()
	} else {
		s.grp.entering.Add(1) // seen by the section before: it may leave its commit to this one
		s.mu.Lock()
		s.grp.entering.Add(-1)
	}
	s.tx = s.st.core.Begin() // the open transaction when the section before left it to this one
}

// lock takes the Server's lock outside a section, to read its memory or
// note a diagnostic (kept with the next commit): counted as begin counts,
// so that a section ending meanwhile may leave its commit to the group;
// unlock then commits that group when nobody else is coming to.
func (s *Service) lock() { s.begin() }

func (s *Service) unlock() {
	if s.grp.open > 0 && s.grp.entering.Load() == 0 {
		s.checkpointLocked()
	}
	s.mu.Unlock()
}

// commit ends the section. Its transaction is committed under the lock,
// or, when others wait to take the lock, left open for the last of them
// to commit with theirs (fewer pages written and fewer commits under the
// lock); then the lock is released, and the section's answer is written
// only once what it changed, and what it read of others' changes, is
// committed and on disk (groupCommit). Its webhooks are released after
// the same sync.
func (s *Service) commit() {
	g := &s.grp
	if g.st == nil {
		s.checkpointLocked()
		s.mu.Unlock()
		return
	}
	if s.storeErr == nil && g.entering.Load() > 0 && g.open < maxGroup-1 && g.st.pending() {
		g.open++
	} else {
		s.checkpointLocked()
	}
	g.mu.Lock()
	g.committed = max(g.committed, g.st.lastCommit()) // Close's own commit too
	synced := g.synced
	g.mu.Unlock()
	need := g.st.needs(synced)
	s.mu.Unlock()
	if need > synced {
		s.waitSynced(need)
	}
}

// groupCommit is the group commit of a store whose commits return before
// they are on disk (Config.DBPath: SQLite in WAL mode with
// synchronous=NORMAL writes a commit's frames to the -wal file without
// syncing it). Each section commits under the Server's lock, which it then
// releases, and waits outside it until a sync of the -wal file that
// started after its commit returned has completed; the first waiter finds
// no sync running and runs one (the leader), covering every commit made
// before it began, so the writers that commit while it runs share the next
// one, and the next sections already run their statements meanwhile, as
// PostgreSQL's group commit does.
//
// Durability is synchronous=FULL's: no answer is written before the WAL
// frames of every commit it depends on are synced. The -wal file's
// directory entry is synced when the store opens it; SQLite itself syncs
// the WAL before each checkpoint copies frames into the database and the
// database after it (synchronous=NORMAL does both), so a frame is never
// overwritten by the WAL restart that follows a checkpoint before it is in
// the synced database; the WAL header it writes at a restart is synced
// before any frame after it. On Linux an fsync of any descriptor of the
// file flushes every write to it, whoever made it. A power loss leaves a
// prefix of the commits (SQLite recovers the WAL up to the last frame
// whose checksum chain holds), which includes every one acknowledged.
//
// A failed sync is a failed commit for every section it covered and every
// later one: ErrStore (503 SANDBOX_STORE, /readyz 503) until a restart,
// and their webhooks are never sent. Those commits cannot be undone, so
// the memory may show their changes, which the 503 on every request then
// hides; the file may or may not hold them after a restart (as after a
// failed fsync inside SQLite's own COMMIT), which a 503 does not deny.
//
// A section that only reads waits as well when it read a change not yet
// synced, or when a commit not yet synced changed the Server's own memory
// (terminals, clock, faults), whose reads the store cannot see: nothing
// is visible to one request before it is durable (see storage.SQL.Needs).
//
// A section that ends while others wait to take the lock (they arrived
// while it ran) leaves its changes in the open transaction: the last of
// them, the one that finds nobody waiting, or the maxGroup-th, commits
// for all, and a failed commit fails every section in it, memory going
// back to the previous commit (keptState).
type groupCommit struct {
	st       durableStore // nil: commits are durable when they return (memory)
	entering atomic.Int32 // sections and lock users waiting for the Server's lock
	open     int          // under the Server's lock: sections whose changes wait in the open transaction

	mu        sync.Mutex
	cond      sync.Cond    // on mu: a sync or a commit ended
	sync      func() error // under mu: syncs the -wal file (tests inject a failure)
	committed uint64       // under mu: the last commit of a change that returned
	synced    uint64       // under mu: every commit up to this one is on disk
	syncing   bool         // under mu: a leader runs a sync now
	err       error        // under mu: a sync or a commit failed: nothing is synced any more
	held      []heldBatch  // under mu: webhooks of commits not yet synced, oldest first
	syncs     int          // under mu: syncs made, for the tests
	waiting   int          // under mu: sections in waitSynced, for the tests
}

// durableStore is what the group commit asks of the store (storage.SQL, through durable).
type durableStore interface {
	// lastCommit is the sequence number of the last commit of a change.
	lastCommit() uint64
	// pending says that the open transaction holds changes and nothing
	// failed: its commit may be left to a later section.
	pending() bool
	// needs is the commit the section's answer waits for (what it wrote
	// or read; at most synced when nothing), and starts the next section;
	// commits up to synced are on disk.
	needs(synced uint64) uint64
	// syncWAL makes every commit returned so far durable.
	syncWAL() error
}

// maxGroup bounds the sections one commit covers, so that a steady stream
// of requests (someone is always waiting to begin) still commits, and the
// first section of a group is not kept waiting for long.
const maxGroup = 64

// heldBatch is the webhooks of one commit, queued once it is synced.
type heldBatch struct {
	seq   uint64
	hooks []heldHook
}

// waitSynced returns once commit n is on disk or a sync or commit failed
// (then storeErr is set), leading a sync when none runs and commit n has
// returned.
func (s *Service) waitSynced(n uint64) {
	g := &s.grp
	g.mu.Lock()
	g.waiting++
	defer func() { g.waiting--; g.mu.Unlock() }()
	for g.synced < n && g.err == nil {
		if g.syncing || g.committed < n { // a sync runs, or the transaction is still open
			g.cond.Wait()
			continue
		}
		g.syncing = true
		target, sync := g.committed, g.sync
		g.syncs++
		g.mu.Unlock()
		err := sync()
		if err != nil {
			s.mu.Lock()
			if s.storeErr == nil {
				s.storeErr = fmt.Errorf("%w: %v", ErrStore, err)
				if l := s.cfg.Logger; l != nil {
					l.Error("database sync failed: answering 503 until restarted", slog.String("error", err.Error()))
				}
			}
			s.mu.Unlock()
		}
		g.mu.Lock()
		var send []heldBatch
		if err != nil {
			g.err, g.held = err, nil
		} else {
			i := 0
			for i < len(g.held) && g.held[i].seq <= target {
				i++
			}
			send, g.held = g.held[:i:i], g.held[i:]
		}
		if len(send) > 0 {
			// Queued in commit order, before any later leader's, and
			// without mu: the dispatcher takes the Server's lock to log.
			g.mu.Unlock()
			for _, b := range send {
				for _, h := range b.hooks {
					s.release(h)
				}
			}
			g.mu.Lock()
		}
		if err == nil {
			g.synced = target
		}
		g.syncing = false
		g.cond.Broadcast()
	}
}

// checkpointLocked commits what the section did so far and sends its held
// webhooks (with -db, once the commit is synced); the section may go on
// (expiry of a long backlog commits in batches). When the commit fails, or a commit failed before, the store
// rolls the section back and the Server's own memory (terminals, transfer
// counters, clock offset, faults) goes back to the last commit: nothing a
// 503 answered is visible anywhere, not in /sandbox/state, the dashboard or
// Server.Terminals.
func (s *Service) checkpointLocked() {
	var err error
	if s.storeErr != nil {
		s.tx.Rollback() // the store failed: nothing more is kept until a restart
	} else if err = s.tx.Commit(); err != nil {
		s.tx.Rollback()
		s.storeErr = fmt.Errorf("%w: %v", ErrStore, err)
		if l := s.cfg.Logger; l != nil {
			l.Error("database commit failed: answering 503 until restarted", slog.String("error", err.Error()))
		}
		if g := &s.grp; g.st != nil {
			g.mu.Lock()
			g.err, g.held = err, nil // the sections of the group wait for a commit that will not come
			g.cond.Broadcast()
			g.mu.Unlock()
		}
	}
	s.grp.open = 0
	switch g := &s.grp; {
	case s.storeErr != nil: // the store rolled the transaction back: nothing of it is visible
	case g.st == nil:
		for _, h := range s.held {
			s.release(h)
		}
	default:
		seq := g.st.lastCommit()
		g.mu.Lock()
		g.committed = max(g.committed, seq)
		if len(s.held) > 0 { // sent once the commit is synced (waitSynced)
			g.held = append(g.held, heldBatch{seq: seq, hooks: append([]heldHook(nil), s.held...)})
		}
		g.cond.Broadcast() // the sections of the group may lead its sync
		g.mu.Unlock()
	}
	clear(s.held)
	s.held = s.held[:0]
}

// StoreFailed returns the error of a failed commit, or nil.
func (s *Service) StoreFailed() error {
	s.lock()
	defer s.unlock()
	return s.storeErr
}

// orStoreErr is the error a Go control returns: the store's when it
// failed, else the control's own.
func (s *Service) orStoreErr(err error) error {
	if serr := s.StoreFailed(); serr != nil {
		return serr // the control's own answer came from a store that failed
	}
	return err
}

// outboxLocked records a delivery in the store's outbox within the current
// section and holds it until the section commits.
func (s *Service) outboxLocked(key string, dl delivery) {
	s.tx.Outbox(key, dl.out())
	s.held = append(s.held, heldHook{key: key, dl: dl})
}

// deliveryUpdated is the dispatcher's report of an attempt or an end.
func (s *Service) deliveryUpdated(rec Delivery) {
	s.lock()
	defer s.unlock()
	s.jr.deliveryUpdated(rec)
}

// openStore opens the store Config.DBPath names (or the in-memory one),
// builds the merchants from it and returns the deliveries to restore.
func (s *Service) openStore() ([]webhook.Stored, error) {
	path := s.cfg.DBPath
	if path == "" && s.cfg.TestDB != nil {
		path, s.removeDB = s.cfg.TestDB()
	}
	if path == "" {
		start := func() []*merchant { return startMerchants(s.cfg.Merchants) }
		s.st, s.jr = store{core: storage.NewMemory(start)}, memJournal{}
		return nil, nil
	}
	drv, ok := storage.Registered()
	if !ok {
		return nil, ErrNoDriver
	}
	st, err := storage.OpenSQL(drv, storage.SQLDeps{
		Start:  func() []*merchant { return startMerchants(s.cfg.Merchants) },
		Logger: s.cfg.Logger, MaskKey: mask.Key, Banks: s.cfg.Banks, MaxSamePending: s.cfg.MaxSamePendingAmount,
		RequestLogSize: RequestLogSize, DeliveryLogSize: DeliveryLogSize,
	}, path)
	if err != nil {
		return nil, err
	}
	jr := newSQLJournal(st)
	s.st, s.jr = store{core: st}, jr
	if st.DeferSync() {
		s.grp.st, s.grp.sync = durable{st}, st.SyncWAL
		s.grp.cond.L = &s.grp.mu
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st.LoadMerchants()
	r, err := jr.restore()
	if err != nil {
		st.Close()
		return nil, storage.FileError(path, "%v", err)
	}
	st.SetValue(offsetKey, r.offset)
	st.SetValue(faultsKey, r.faults)
	s.requests = r.counters
	s.reqLog = append(s.reqLog, r.reqLog...)
	if len(s.reqLog) == RequestLogSize {
		s.reqPos = 0 // the ring is full: its oldest line is the next overwritten
	}
	st.MarkWritten() // a new file's merchants and terminals
	err = st.Commit()
	if err == nil && st.DeferSync() {
		err = st.SyncWAL() // what a restart gives back is on disk before the first request
	}
	if err != nil {
		st.Close()
		return nil, storage.FileError(path, "%v", err)
	}
	return r.deliveries, nil
}
