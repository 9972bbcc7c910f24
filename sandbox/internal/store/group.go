package store

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Outcome is what became of a section's changes (Group.End).
type Outcome int

// The outcomes of a section.
const (
	// Kept: the changes are committed and, when commits are synced later
	// (SQL in WAL mode), synced; or there were none and what the section
	// read is durable.
	Kept Outcome = iota
	// NotKept: the changes were rolled back (the section's commit failed,
	// or the store had failed before it): nothing of them is anywhere.
	NotKept
	// MaybeKept: the changes were committed and the sync that would have
	// made them durable failed: the disk may or may not have kept them.
	MaybeKept
)

// GroupConfig is what a Group runs with.
type GroupConfig[H any] struct {
	// Release takes what a section held (Group.Hold) once the section's
	// commit is durable: never for a section whose changes were not kept.
	// It is called with the Group's lock held when commits are durable as
	// they return (memory), without it otherwise.
	Release func(H)
	// Failed is wrapped by Err once the store failed (the sandbox's
	// ErrStore), so that callers test one sentinel whatever the cause.
	Failed error
	// Logger, when set, hears of the failure that stops the store.
	Logger *slog.Logger
}

// Group runs the sandbox's sections over a Store: one at a time under its
// lock, each one transaction of the store (Begin), committed when it ends
// (End) and, for a store whose commits return before they are on disk,
// answered only once they are. It is the group commit of such a store
// (SQL: SQLite in WAL mode with synchronous=NORMAL writes a commit's
// frames to the -wal file without syncing it). Each section commits under
// the lock, which it then releases, and waits outside it until a sync of
// the -wal file that started after its commit returned has completed; the
// first waiter finds no sync running and runs one (the leader), covering
// every commit made before it began, so the writers that commit while it
// runs share the next one, and the next sections already run their
// statements meanwhile, as PostgreSQL's group commit does.
//
// Durability is synchronous=FULL's: no answer is given before the WAL
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
// What a section is told when the store fails (End) is true of its own
// changes, whatever the order of the failures:
//
//   - A failed commit (disk full, the file removed) rolls back the
//     sections of its group: NotKept, and so is every section after it,
//     refused until a restart. The sections whose own commit returned
//     before it are in the -wal file: they still get their sync, and are
//     Kept when it succeeds (what they held is released); a retry of them
//     would make them twice.
//   - A failed sync of the -wal file: the disk may or may not have kept
//     what it covered (after a failed fsync the kernel may have dropped
//     the pages, or written some; a second fsync proves nothing), so every
//     section whose commit returned and is not yet synced is told
//     MaybeKept, never NotKept; what they held is dropped. Sections whose
//     changes waited in the open transaction are rolled back: NotKept.
//
// After either the store is failed (Err) until a restart: the sandbox's
// memory may hold commits the file may not.
//
// A section that only reads waits as well when it read a change not yet
// synced, or when a commit not yet synced changed what the store keeps
// beside the resources (terminals, clock, faults), which it does not track
// by id: nothing is visible to one request before it is durable (see
// SQL.needs).
//
// A section that ends while others wait to take the lock (they arrived
// while it ran) leaves its changes in the open transaction: the last of
// them, the one that finds nobody waiting, or the maxGroup-th, commits
// for all, and a failed commit fails every section in it: the store rolls
// the transaction back, and nothing of it is visible.
//
// With a store whose commits are durable when they return (Memory) a
// section simply commits under the lock.
type Group[H any] struct {
	cfg GroupConfig[H]

	mu       sync.Mutex   // the section lock
	st       Store        // under mu
	tx       Txn          // under mu: the open transaction (Begin)
	err      error        // under mu: the store failed; nothing more is kept until a restart
	held     []H          // under mu: what the section holds until its commit is durable
	open     int          // under mu: sections whose changes wait in the open transaction
	entering atomic.Int32 // sections and Lock users waiting for mu

	d       *SQL       // nil: commits are durable when they return
	smu     sync.Mutex // the syncs' state below; taken after mu, never before it
	cond    sync.Cond  // on smu: a sync or a commit ended
	sync    func() error
	batches []heldBatch[H] // under smu: what commits not yet synced held, oldest first

	committed uint64 // under smu: the last commit of a change that returned
	synced    uint64 // under smu: every commit up to this one is on disk
	syncing   bool   // under smu: a leader runs a sync now
	syncErr   error  // under smu: a sync failed: nothing is synced any more
	failed    bool   // under smu: a commit failed: committed is the last one there will be
	syncs     int    // under smu: syncs made, for the tests
	waiting   int    // under smu: sections in waitSynced, for the tests
}

// heldBatch is what the sections of one commit held, released once it is
// synced.
type heldBatch[H any] struct {
	seq  uint64
	held []H
}

// maxGroup bounds the sections one commit covers, so that a steady stream
// of requests (someone is always waiting to begin) still commits, and the
// first section of a group is not kept waiting for long.
const maxGroup = 64

// NewGroup runs sections over st, which it owns from now on (Close).
func NewGroup[H any](st Store, cfg GroupConfig[H]) *Group[H] {
	g := &Group[H]{cfg: cfg, st: st, tx: st.Begin()}
	if sq, ok := st.(*SQL); ok && sq.deferSync {
		g.d, g.sync = sq, sq.syncWAL
		g.cond.L = &g.smu
	}
	return g
}

// Begin opens a section: it takes the lock, and everything the section
// changes until End is one transaction, the one returned (the open one,
// when the section before left its commit to this one).
func (g *Group[H]) Begin() Txn {
	if g.d == nil {
		g.mu.Lock()
	} else {
		g.entering.Add(1) // seen by the section before: it may leave its commit to this one
		g.mu.Lock()
		g.entering.Add(-1)
	}
	g.tx = g.st.Begin()
	return g.tx
}

// Lock takes the lock outside a section, to read what the lock guards
// beside the store or to note a diagnostic (kept with the next commit):
// counted as Begin counts, so that a section ending meanwhile may leave
// its commit to the group; Unlock then commits that group when nobody
// else is coming to.
func (g *Group[H]) Lock() { g.Begin() }

// Unlock releases the lock Lock took.
func (g *Group[H]) Unlock() {
	if g.open > 0 && g.entering.Load() == 0 {
		g.checkpoint()
	}
	g.mu.Unlock()
}

// Hold keeps h until the section's commit is durable, then releases it
// (GroupConfig.Release); h is dropped when the changes are not kept, or
// may not be. The caller is in a section.
func (g *Group[H]) Hold(h H) { g.held = append(g.held, h) }

// Err is the error the store failed with (wrapping GroupConfig.Failed),
// or nil. The caller holds the lock.
func (g *Group[H]) Err() error { return g.err }

// End ends the section and says what became of its changes. Its
// transaction is committed under the lock, or, when others wait to take
// the lock, left open for the last of them to commit with theirs (fewer
// pages written and fewer commits under the lock); then the lock is
// released, and End returns only once what the section changed, and what
// it read of others' changes, is committed and on disk. What it held is
// released after the same sync.
func (g *Group[H]) End() Outcome {
	if g.d == nil {
		g.checkpoint()
		failed := g.err != nil
		g.mu.Unlock()
		if failed {
			return NotKept
		}
		return Kept
	}
	if g.err == nil && g.entering.Load() > 0 && g.open < maxGroup-1 && g.d.pending() {
		g.open++
	} else {
		g.checkpoint()
	}
	g.smu.Lock()
	g.committed = max(g.committed, g.d.seq) // Close's own commit too
	synced := g.synced
	g.smu.Unlock()
	need := g.d.needs(synced)
	// Still under the lock, right after the section's own checkpoint: a
	// store failed now failed before that commit (a failed sync sets err
	// under the lock), so the section's changes were rolled back, whatever
	// it waited for.
	rolledBack := g.err != nil
	g.mu.Unlock()
	switch {
	case rolledBack:
		return NotKept
	case need > synced:
		return g.waitSynced(need)
	}
	return Kept
}

// Checkpoint commits what the section did so far, and releases what it
// held (with a deferred sync, once the commit is synced); the section goes
// on (expiry of a long backlog commits in batches). When the commit fails,
// or a commit failed before, the store rolls the transaction back, and
// everything the store keeps beside the resources with it: nothing that
// was not kept is visible. The caller holds the lock.
func (g *Group[H]) Checkpoint() { g.checkpoint() }

// Deferred tells that commits return before they are on disk (a sync
// makes them durable): a change that must survive a kill without waiting
// for the next section is committed at once (Checkpoint).
func (g *Group[H]) Deferred() bool { return g.d != nil }

func (g *Group[H]) checkpoint() {
	if g.err != nil {
		g.tx.Rollback() // the store failed: nothing more is kept until a restart
	} else if err := g.tx.Commit(); err != nil {
		g.tx.Rollback()
		g.fail(err, "database commit failed: answering 503 until restarted")
		if g.d != nil {
			g.smu.Lock()
			// The sections of the group wait for a commit that will not
			// come; those whose commit returned before still get their
			// sync (and their release).
			g.failed = true
			g.cond.Broadcast()
			g.smu.Unlock()
		}
	}
	g.open = 0
	switch {
	case g.err != nil: // the store rolled the transaction back: nothing of it is visible
	case g.d == nil:
		for _, h := range g.held {
			g.cfg.Release(h)
		}
	default:
		seq := g.d.seq
		g.smu.Lock()
		g.committed = max(g.committed, seq)
		if len(g.held) > 0 { // released once the commit is synced (waitSynced)
			g.batches = append(g.batches, heldBatch[H]{seq: seq, held: append([]H(nil), g.held...)})
		}
		g.cond.Broadcast() // the sections of the group may lead its sync
		g.smu.Unlock()
	}
	clear(g.held)
	g.held = g.held[:0]
}

// fail records the store's failure, the first one only.
func (g *Group[H]) fail(err error, msg string) {
	if g.err != nil {
		return
	}
	g.err = fmt.Errorf("%w: %v", g.cfg.Failed, err)
	if l := g.cfg.Logger; l != nil {
		l.Error(msg, slog.String("error", err.Error()))
	}
}

// waitSynced returns Kept once commit n is on disk, leading a sync when
// none runs and commit n has returned; NotKept when commit n never came
// (the group's commit failed or was rolled back); MaybeKept when it
// returned and a sync failed before it was on disk.
func (g *Group[H]) waitSynced(n uint64) Outcome {
	g.smu.Lock()
	g.waiting++
	defer func() { g.waiting--; g.smu.Unlock() }()
	for g.synced < n {
		switch {
		case g.syncErr != nil && n <= g.committed:
			return MaybeKept
		case g.syncErr != nil, g.failed && n > g.committed:
			// No commit comes after a failure: the transaction n waited
			// for was rolled back.
			return NotKept
		}
		if g.syncing || g.committed < n { // a sync runs, or the transaction is still open
			g.cond.Wait()
			continue
		}
		g.syncing = true
		target, sync := g.committed, g.sync
		g.syncs++
		g.smu.Unlock()
		err := sync()
		if err != nil {
			g.mu.Lock()
			g.fail(err, "database sync failed: answering 503 until restarted")
			// A sync fails too when it finds the -wal file removed: its
			// commits, the acknowledged ones included, are copied into the
			// database now (no later commit or probe will: the store has
			// failed). The open transaction, if any, is rolled back first.
			if g.open > 0 {
				g.checkpoint()
			}
			g.d.salvage()
			g.mu.Unlock()
		}
		g.smu.Lock()
		var release []heldBatch[H]
		if err != nil {
			g.syncErr, g.batches = err, nil
		} else {
			i := 0
			for i < len(g.batches) && g.batches[i].seq <= target {
				i++
			}
			release, g.batches = g.batches[:i:i], g.batches[i:]
		}
		if len(release) > 0 {
			// Released in commit order, before any later leader's, and
			// without smu: Release may take the lock (a dispatcher logs).
			g.smu.Unlock()
			for _, b := range release {
				for _, h := range b.held {
					g.cfg.Release(h)
				}
			}
			g.smu.Lock()
		}
		if err == nil {
			g.synced = target
		}
		g.syncing = false
		g.cond.Broadcast()
	}
	return Kept
}

// Ping tells whether the store can still be used: the error it failed
// with, or the store's own Ping. When it cannot and sections left their
// changes in the open transaction, that transaction is committed now: it
// meets the same failure (rolled back, they are told NotKept), and a
// removed -wal file's commits are copied into the database before Ping
// answers, not at some later change.
func (g *Group[H]) Ping() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	err := g.st.Ping()
	if err != nil && g.open > 0 {
		g.checkpoint()
	}
	return err
}

// Close commits what waits in the open transaction and closes the store.
// The caller is in a section, which it then ends.
func (g *Group[H]) Close() error {
	g.checkpoint() // the sections waiting for a commit get theirs, and its outcome
	return g.st.Close()
}

// The tests' view of the Group (package sandbox's, through the service's
// Probe).

// Store is the store sections run over.
func (g *Group[H]) Store() Store {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st
}

// WrapStore replaces the store with what wrap, called under the lock,
// returns (a store that fails on demand); the Group's syncs stay the
// original store's.
func (g *Group[H]) WrapStore(wrap func(Store) Store) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.st = wrap(g.st)
}

// WrapSync wraps the sync of the -wal file; put undoes it.
func (g *Group[H]) WrapSync(wrap func(real func() error) func() error) (put func()) {
	g.smu.Lock()
	defer g.smu.Unlock()
	real := g.sync
	g.sync = wrap(real)
	return func() {
		g.smu.Lock()
		defer g.smu.Unlock()
		g.sync = real
	}
}

// Syncs is how many syncs of the -wal file were made.
func (g *Group[H]) Syncs() int {
	g.smu.Lock()
	defer g.smu.Unlock()
	return g.syncs
}

// Waiting is how many sections wait for a sync.
func (g *Group[H]) Waiting() int {
	g.smu.Lock()
	defer g.smu.Unlock()
	return g.waiting
}

// Entering is how many sections wait to take the lock.
func (g *Group[H]) Entering() int32 { return g.entering.Load() }

// Open is how many sections left their changes in the open transaction.
func (g *Group[H]) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// LastCommit is the sequence number of the SQL store's last commit of a
// change (0 in memory).
func (g *Group[H]) LastCommit() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.d == nil {
		return 0
	}
	return g.d.seq
}
