package service

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/paykit-dev/paykit-go/internal/mask"
	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
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

// begin opens a section: it takes the Service's lock, and everything the
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

// lock takes the Service's lock outside a section, to read its memory or
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

// commit ends the section (end), for a section whose answer does not
// depend on what became of its changes, or that asks storeFailed.
func (s *Service) commit() { s.end() }

// endInto ends the section (end) and, when its changes were not kept or
// may have been, puts that outcome in *lerr instead of the rule's answer:
// the API answers it (NotKept 503, MaybeKept 500).
func (s *Service) endInto(lerr **ledger.Error) {
	if out := s.end(); out != nil {
		*lerr = out
	}
}

// endErr ends the section (end) and, when its changes were not kept or may
// have been, puts that outcome (ledger.NotKept or MaybeKept) in *err
// instead of the control's own answer: the control routes answer it (503
// or 500), package sandbox's Go controls wrap ErrStore around it.
func (s *Service) endErr(err *error) {
	if out := s.end(); out != nil {
		*err = out
	}
}

// orNil is e as an error: nil when e is (never a typed nil).
func orNil(e *ledger.Error) error {
	if e == nil {
		return nil
	}
	return e
}

// The outcomes of a section whose store failed (end).
var (
	errNotKept = &ledger.Error{Kind: ledger.NotKept, Code: spec.CodeSandboxStore,
		Message: "the sandbox's database failed: the change was not kept"}
	errMaybeKept = &ledger.Error{Kind: ledger.MaybeKept, Code: spec.CodeSandboxStore,
		Message: "the sandbox's database failed while making the change durable: it may or may not be kept"}
)

// end ends the section and says what became of its changes: nil when they
// are kept (committed and, with -db, synced) or there were none to keep
// and what the section read is durable; errNotKept when they were rolled
// back (the section's commit failed, or the store had failed before it:
// nothing of it is anywhere); errMaybeKept when they were committed and
// the sync that would have made them durable failed (see groupCommit).
// Its transaction is committed under the lock, or, when others wait to
// take the lock, left open for the last of them to commit with theirs
// (fewer pages written and fewer commits under the lock); then the lock
// is released, and end returns only once what the section changed, and
// what it read of others' changes, is committed and on disk
// (groupCommit). Its webhooks are released after the same sync.
func (s *Service) end() *ledger.Error {
	g := &s.grp
	if g.st == nil {
		s.checkpointLocked()
		failed := s.storeErr != nil
		s.mu.Unlock()
		if failed {
			return errNotKept
		}
		return nil
	}
	if s.storeErr == nil && g.entering.Load() > 0 && g.open < maxGroup-1 && g.st.Pending() {
		g.open++
	} else {
		s.checkpointLocked()
	}
	g.mu.Lock()
	g.committed = max(g.committed, g.st.LastCommit()) // Close's own commit too
	synced := g.synced
	g.mu.Unlock()
	need := g.st.Needs(synced)
	// Still under the lock, right after the section's own checkpoint: a
	// store failed now failed before that commit (a failed sync sets
	// storeErr under the lock), so the section's changes were rolled
	// back, whatever it waited for.
	rolledBack := s.storeErr != nil
	s.mu.Unlock()
	switch {
	case rolledBack:
		return errNotKept
	case need > synced:
		return s.waitSynced(need)
	}
	return nil
}

// groupCommit is the group commit of a store whose commits return before
// they are on disk (Config.DBPath: SQLite in WAL mode with
// synchronous=NORMAL writes a commit's frames to the -wal file without
// syncing it). Each section commits under the Service's lock, which it then
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
// What a section is told when the store fails (end) is true of its own
// changes, whatever the order of the failures:
//
//   - A failed commit (disk full, the file removed) rolls back the
//     sections of its group: not kept (ledger.NotKept, 503 SANDBOX_STORE),
//     and so is every section after it, refused until a restart. The
//     sections whose own commit returned before it are in the -wal file:
//     they still get their sync, and answer as if nothing failed when it
//     succeeds (their webhooks are sent); a retry of them would make them
//     twice.
//   - A failed sync of the -wal file: the disk may or may not have kept
//     what it covered (after a failed fsync the kernel may have dropped
//     the pages, or written some; a second fsync proves nothing), so every
//     section whose commit returned and is not yet synced is told that it
//     may have been kept (ledger.MaybeKept, 500 SANDBOX_STORE), never 503;
//     their webhooks are not sent now (the outbox rows that are kept are
//     sent at the next start). Sections whose changes waited in the open
//     transaction are rolled back: not kept.
//
// After either the sandbox is not ready (/readyz 503, ErrStore) and
// refuses every request until a restart: its memory may hold commits the
// file may not.
//
// A section that only reads waits as well when it read a change not yet
// synced, or when a commit not yet synced changed what the store keeps
// beside the resources (terminals, clock, faults), which it does not track
// by id: nothing is visible to one request before it is durable (see
// storage.SQL.Needs).
//
// A section that ends while others wait to take the lock (they arrived
// while it ran) leaves its changes in the open transaction: the last of
// them, the one that finds nobody waiting, or the maxGroup-th, commits
// for all, and a failed commit fails every section in it: the store rolls
// the transaction back, and nothing of it is visible.
type groupCommit struct {
	st       durableStore // nil: commits are durable when they return (memory)
	entering atomic.Int32 // sections and lock users waiting for the Service's lock
	open     int          // under the Service's lock: sections whose changes wait in the open transaction

	mu        sync.Mutex
	cond      sync.Cond    // on mu: a sync or a commit ended
	sync      func() error // under mu: syncs the -wal file (tests inject a failure)
	committed uint64       // under mu: the last commit of a change that returned
	synced    uint64       // under mu: every commit up to this one is on disk
	syncing   bool         // under mu: a leader runs a sync now
	err       error        // under mu: a sync failed: nothing is synced any more
	failed    bool         // under mu: a commit failed: committed is the last one there will be
	held      []heldBatch  // under mu: webhooks of commits not yet synced, oldest first
	syncs     int          // under mu: syncs made, for the tests
	waiting   int          // under mu: sections in waitSynced, for the tests
}

// durableStore is what the group commit asks of the store: storage.SQL
// as it is, with a driver that defers the sync.
type durableStore interface {
	// LastCommit is the sequence number of the last commit of a change.
	LastCommit() uint64
	// Pending says that the open transaction holds changes and nothing
	// failed: its commit may be left to a later section.
	Pending() bool
	// Needs is the commit the section's answer waits for (what it wrote
	// or read; at most synced when nothing), and starts the next section;
	// commits up to synced are on disk.
	Needs(synced uint64) uint64
	// SyncWAL makes every commit returned so far durable.
	SyncWAL() error
	// Salvage keeps what can still be kept once the store failed, with no
	// transaction open: the commits of a removed -wal file.
	Salvage()
}

var _ durableStore = (*storage.SQL)(nil)

// maxGroup bounds the sections one commit covers, so that a steady stream
// of requests (someone is always waiting to begin) still commits, and the
// first section of a group is not kept waiting for long.
const maxGroup = 64

// heldBatch is the webhooks of one commit, queued once it is synced.
type heldBatch struct {
	seq   uint64
	hooks []heldHook
}

// waitSynced returns nil once commit n is on disk, leading a sync when
// none runs and commit n has returned; errNotKept when commit n never came
// (the group's commit failed or was rolled back); errMaybeKept when it
// returned and a sync failed before it was on disk.
func (s *Service) waitSynced(n uint64) *ledger.Error {
	g := &s.grp
	g.mu.Lock()
	g.waiting++
	defer func() { g.waiting--; g.mu.Unlock() }()
	for g.synced < n {
		switch {
		case g.err != nil && n <= g.committed:
			return errMaybeKept
		case g.err != nil, g.failed && n > g.committed:
			// No commit comes after a failure: the transaction n waited
			// for was rolled back.
			return errNotKept
		}
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
			// A sync fails too when it finds the -wal file removed: its
			// commits, the acknowledged ones included, are copied into the
			// database now (no later commit or probe will: the store has
			// failed). The open transaction, if any, is rolled back first.
			if g.open > 0 {
				s.checkpointLocked()
			}
			g.st.Salvage()
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
			// without mu: the dispatcher takes the Service's lock to log.
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
	return nil
}

// checkpointLocked commits what the section did so far and sends its held
// webhooks (with -db, once the commit is synced); the section may go on
// (expiry of a long backlog commits in batches). When the commit fails, or
// a commit failed before, the store rolls the transaction back, the
// terminals, transfer counters, clock offset and faults with it: nothing a
// 503 answered is visible anywhere, not in /sandbox/state, the dashboard
// or Server.Terminals.
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
			// The sections of the group wait for a commit that will not
			// come; those whose commit returned before still get their
			// sync (and their webhooks).
			g.failed = true
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
		seq := g.st.LastCommit()
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

// outboxLocked records a delivery in the store's outbox within the current
// section and holds it until the section commits.
func (s *Service) outboxLocked(key string, dl delivery) {
	s.tx.Outbox(key, dl.out())
	s.held = append(s.held, heldHook{key: key, dl: dl})
}

// deliveryUpdated is the dispatcher's report of an attempt or an end. An
// attempt is kept with the next commit; an end is committed now (with
// whatever waits in the open transaction), since a delivery not recorded as
// ended is sent again at the next start, and on a quiet sandbox the next
// commit may be far off. It is not synced for itself: a kill keeps it (the
// -wal file's writes are the kernel's), a power cut before the next sync may
// not, and the webhook is then sent again, as at-least-once allows.
func (s *Service) deliveryUpdated(rec Delivery) {
	s.lock()
	defer s.unlock()
	s.jr.deliveryUpdated(rec)
	if rec.State != webhook.Pending && s.grp.st != nil {
		s.checkpointLocked()
	}
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
		s.grp.st, s.grp.sync = st, st.SyncWAL
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
