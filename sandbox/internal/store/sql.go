package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// SQL keeps the sandbox in an SQLite file: a section's changes are
// committed when it ends, and synced to disk before its answer is written,
// with one sync of the -wal file shared by the sections that committed
// while the previous one ran (Group, the group commit). It holds in
// memory only the resources a section touched (cleared at commit), the
// merchants and terminals (as many as configured), and the lazy
// diagnostics described at CountersChanged. Besides the Store it is the journal of the sandbox's
// diagnostics (SaveOffset, SaveFaults, CountersChanged, LogRequest,
// DeliveryUpdated; Restore at start), written in the same transactions.
type SQL struct {
	db    *sql.DB
	path  string
	ident os.FileInfo // the file path named when opened (sameFile)
	deps  SQLDeps

	tx    *sql.Tx
	wrote bool  // the transaction changed something: commit must write
	err   error // the first failure of the section

	// resources loaded in this section: one copy each, so two lookups of
	// one id see each other's changes.
	pm map[string]*payment
	po map[string]*payout
	wd map[string]*withdrawal

	ms   merchants // the merchants and terminals, and the transaction's copies
	vals values    // the sandbox's own state (Value)

	counters      func() []Counter            // the request counters as they are now (SetCounters)
	countersDirty atomic.Bool                 // the counters changed since they were last written (CountersChanged)
	reqs          [][]byte                    // request log lines not yet written
	diagN         int                         // commits since the counters and request lines were last written
	diagAt        time.Time                   // when they were last written (monotonic)
	dlv           map[string]webhook.Delivery // delivery records not yet written
	closed        bool

	// What the open transaction changed: the payments, payouts and
	// withdrawals it wrote, by id, and whether it wrote anything else,
	// which is not tracked by id (terminals, merchants' counters, the
	// clock offset, faults, or the outbox).
	changedIDs  map[string]struct{}
	changedMore bool
	secWrote    bool // the section changed something
	secSaw      bool // the section read something the open transaction changed
	lazy        bool // flushLazy writes: diagnostics nobody reads from the file
	lookup      bool // a lookup by id or ext_id runs: the rows it loads tell what it saw

	// What the group commit asks (needs): seq counts the commits of a
	// change; dirty maps each id changed by a commit maybe not yet synced
	// to that commit, moreSeq is the last commit that changed anything
	// else, and need is the commit the section's answer waits for.
	seq      uint64
	dirty    map[string]uint64
	moreSeq  uint64
	need     uint64
	prunedTo uint64 // dirty holds no commit up to this one

	// deferSync: commits return before they are on disk (the driver's
	// Driver.DeferSync) and syncWAL syncs them, outside the Group's lock.
	deferSync bool
	walMu     sync.Mutex
	wal       *os.File    // under walMu: the -wal file, nil once closed
	walErr    error       // under walMu: what syncWAL answers once closed
	walIdent  os.FileInfo // the -wal file as opened (sameFile); nil without deferSync
	walPath   string      // its name, beside the file a symbolic link names
	rescued   bool        // rescueWAL ran (under the caller's lock)
	rescuedOK atomic.Bool // it copied every commit of the removed -wal file into the database, synced

	// stmts holds the queries of the sections prepared once on the one
	// connection (nil: not to be prepared), so that SQLite parses each
	// once, not in every section; wanted, those met while a transaction
	// held the connection, prepared when it ends.
	stmts  map[string]*sql.Stmt
	wanted []string

	// next is no later than the earliest valid_until of a PENDING payment
	// (zero: none is PENDING) when nextKnown: every API section asks
	// whether one is due, and with it the answer costs no query.
	next      time.Time
	nextKnown bool
}

// SQLDeps is what the SQL store takes from the sandbox at open: the
// configuration it builds merchants from. What it restores at start it
// returns (Restore).
type SQLDeps struct {
	// Start builds the configured merchants in their starting state, in
	// their configured order: a fresh store's, and the ones Reset
	// restores.
	Start func() []*ledger.Merchant
	// Logger hears of a file that differs from the configuration (nil:
	// nobody).
	Logger *slog.Logger
	// MaskKey shows an API key in a log line without giving it away.
	MaskKey func(string) string
	// Banks are the configured banks: a stored payment's bank is shown
	// with its configured name.
	Banks []ledger.Bank
	// MaxSamePending is the cap of PENDING payments of one amount;
	// PendingWithAmount counts no further.
	MaxSamePending int
	// RequestLogSize and DeliveryLogSize bound the request and delivery
	// logs kept in the file, as the sandbox bounds them in memory.
	RequestLogSize, DeliveryLogSize int
}

// FileError wraps every refusal of a file, naming it: the errors of
// opening, and of committing what opening wrote.
func FileError(path, format string, a ...any) error {
	return fmt.Errorf("sandbox: database %s: %s", path, fmt.Sprintf(format, a...))
}

// OpenSQL opens (or creates) path with drv, refusing a file it must not
// touch, migrates an older layout, and takes the file's lock for as long
// as the store is open. A path that is, or goes through, a symbolic link
// opens the file the link names (its -wal file is beside that file, where
// SQLite keeps it); a link that names no file is refused, not followed to
// create one.
func OpenSQL(drv Driver, deps SQLDeps, path string) (*SQL, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, FileError(path, "is a directory")
	} else if _, lerr := os.Lstat(path); errors.Is(err, fs.ErrNotExist) && lerr == nil {
		return nil, FileError(path, "is a symbolic link to a file that does not exist: "+
			"point it at the database, or give -db the file itself")
	} else if errors.Is(err, fs.ErrNotExist) {
		// Created owner-only before SQLite sees it (SQLite gives its WAL
		// the same mode): the file holds notification tokens and receivers'
		// URLs. An empty file is a new database to SQLite.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, FileError(path, "cannot be created: %v", err)
		}
		f.Close()
	}
	// The driver opens it with the settings the store relies on (one
	// exclusive lock, durable commits, no busy wait): see sandbox/sqlite.
	db, err := drv.Open(path)
	if err != nil {
		return nil, FileError(path, "%v", err)
	}
	db.SetMaxOpenConns(1) // one connection: it holds the lock
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	st := &SQL{db: db, path: path, deps: deps, deferSync: drv.DeferSync}
	if err := st.prepare(); err != nil {
		db.Close()
		if why := readOnly(path); why != "" {
			// SQLite reports it as an I/O error of its lock, which prepare
			// would call damage: say what it is instead.
			return nil, FileError(path, "is read-only (%s): the sandbox writes every change to it; "+
				"make it writable, or give -db another file; it was left untouched", why)
		}
		return nil, err
	}
	if st.ident, err = os.Stat(path); err != nil {
		db.Close()
		return nil, FileError(path, "%v", err)
	}
	if st.deferSync {
		// SQLite resolves a symbolic link (every link of the path) and
		// keeps its journal beside the file the link names, not beside
		// the link: the WAL synced must be that one. Resolved once, at
		// open: the path is checked against the file opened at every
		// commit anyway (sameFile), so a link moved later is a file
		// replaced.
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			db.Close()
			return nil, FileError(path, "%v", err)
		}
		st.walPath = real + "-wal"
		if st.wal, err = openWAL(st.walPath); err != nil {
			db.Close()
			return nil, FileError(path, "%v", err)
		}
		if st.walIdent, err = st.wal.Stat(); err != nil {
			st.wal.Close()
			db.Close()
			return nil, FileError(path, "%v", err)
		}
	}
	return st, nil
}

// syncWAL makes every commit returned so far durable: one fsync of the
// -wal file, which holds their frames (see Group). It is called without
// the Group's lock, while other sections commit. It fails when
// the database's or the -wal file's name no longer reaches the file
// opened (sameFile), which SQLite would go on writing into unseen by a
// restart, unless the removed -wal file's commits were copied into the
// database (rescueWAL). After close it answers close's
// outcome: closing checkpointed the WAL into the database and synced it.
func (st *SQL) syncWAL() error {
	st.walMu.Lock()
	defer st.walMu.Unlock()
	if st.wal == nil {
		return st.walErr
	}
	if syncFault != nil {
		if err := syncFault(); err != nil {
			return fmt.Errorf("syncing the WAL of %s: %w", st.path, err)
		}
	}
	if err := st.wal.Sync(); err != nil {
		return fmt.Errorf("syncing the WAL of %s: %w", st.path, err)
	}
	// The commits synced are where a restart finds them only if the names
	// still reach the files: a failed commit (a removed file) does not end
	// the syncs of the commits before it.
	err := st.sameFile()
	if errors.Is(err, errWALMoved) && st.rescuedOK.Load() {
		return nil // every commit so far was copied into the database and synced
	}
	return err
}

// CommitSynced commits the transaction and, when commits are synced
// later, syncs it: opening makes what a restart gives back durable before
// the first section runs.
func (st *SQL) CommitSynced() error {
	err := st.Commit()
	if err == nil && st.deferSync {
		err = st.syncWAL()
	}
	return err
}

// MarkWritten makes the next Commit write and count as a change even when
// nothing changed since: opening commits a new file's merchants and
// terminals so.
func (st *SQL) MarkWritten() { st.wrote = true }

// DB is the database, for the tests that break it underneath.
func (st *SQL) DB() *sql.DB { return st.db }

// pending says that the open transaction holds changes and nothing
// failed, so its commit may be left to a later section.
func (st *SQL) pending() bool { return st.tx != nil && st.wrote && st.err == nil && !st.closed }

// needs is the commit the section's answer waits for: its own last commit
// of a change, the commit that last changed a row it looked up, the last
// commit of all when it ran any other query, and the last commit that
// changed what is not tracked by id (changedMore) in any case: reads of
// it go unseen. What is at most synced needs no wait. It forgets what synced
// covers, and starts the next section.
func (st *SQL) needs(synced uint64) uint64 {
	n := max(st.need, st.moreSeq)
	if st.pending() && (st.secWrote || st.secSaw || st.changedMore) {
		n = st.seq + 1 // the open transaction's commit, left to a later section
	}
	st.need, st.secWrote, st.secSaw = 0, false, false
	clear(st.pm) // the next section loads its own copies, as after a commit
	clear(st.po)
	clear(st.wd)
	if synced > st.prunedTo && len(st.dirty) > 0 {
		for id, seq := range st.dirty {
			if seq <= synced {
				delete(st.dirty, id)
			}
		}
		st.prunedTo = synced
	}
	return n
}

func (st *SQL) fail(err error) {
	if st.err == nil && err != nil {
		st.err = err
	}
}

// q is the section's transaction, begun on first use.
func (st *SQL) q() *sql.Tx {
	if st.closed {
		// After Close the handler still answers, but nothing it would
		// change can be kept: 503 rather than an acknowledgement lost.
		st.fail(errors.New("the sandbox is closed: its database is released"))
		return nil
	}
	if st.tx == nil && st.err == nil {
		tx, err := st.db.Begin()
		if err != nil {
			st.fail(err)
			return nil
		}
		st.tx = tx
	}
	return st.tx
}

// querier is a transaction or the database: what a read runs on.
type querier interface {
	Query(query string, args ...any) (*sql.Rows, error)
	QueryRow(query string, args ...any) *sql.Row
}

// r is what a read of the section runs on: the open transaction, or, when
// none is open (nothing changed since the last commit), the file itself,
// so that a section that only reads costs no BEGIN and COMMIT. Both see
// the same state: sections run one at a time on the one connection.
func (st *SQL) r() querier {
	if st.closed {
		st.fail(errors.New("the sandbox is closed: its database is released"))
		return nil
	}
	if st.tx != nil {
		return st.tx
	}
	if st.err != nil {
		return nil
	}
	return st.db
}

func (st *SQL) exec(query string, args ...any) { st.execRow("", query, args...) }

// execRow is exec of a change to the payment, payout or withdrawal id
// alone ("": a change to anything else).
func (st *SQL) execRow(id, query string, args ...any) {
	tx := st.q()
	if tx == nil {
		return
	}
	st.wrote, st.secWrote = true, true
	if id == "" {
		st.changedMore = st.changedMore || !st.lazy
	} else {
		if st.changedIDs == nil {
			st.changedIDs = map[string]struct{}{}
		}
		st.changedIDs[id] = struct{}{}
	}
	var err error
	if ps := st.stmt(query); ps != nil {
		_, err = ps.Exec(args...)
	} else {
		_, err = tx.Exec(query, args...)
	}
	if err != nil {
		st.fail(fmt.Errorf("%s: %w", strings.Fields(query)[0], err))
	}
}

// maxStmts bounds the prepared queries: the store's are a fixed set (the
// payout filter's WHERE has a few forms), so this is only a guard.
const maxStmts = 256

// stmt is query prepared on the connection, within the open transaction
// when there is one; nil when it is not prepared (yet): it then runs as
// text. A query first met within a transaction is prepared when the
// transaction ends (prepareWanted): the one connection is the
// transaction's until then.
func (st *SQL) stmt(query string) *sql.Stmt {
	ps, known := st.stmts[query]
	if !known {
		if st.tx != nil {
			if len(st.stmts)+len(st.wanted) < maxStmts {
				st.wanted = append(st.wanted, query)
			}
			return nil
		}
		ps = st.prepare1(query)
	}
	if ps == nil || st.tx == nil {
		return ps
	}
	return st.tx.Stmt(ps)
}

// prepare1 prepares query on the connection (no transaction open) and
// keeps it; a query SQLite refuses is kept as nil, to run as text and
// report its error where it runs.
func (st *SQL) prepare1(query string) *sql.Stmt {
	if st.stmts == nil {
		st.stmts = map[string]*sql.Stmt{}
	}
	if len(st.stmts) >= maxStmts {
		return nil
	}
	ps, err := st.db.Prepare(query)
	if err != nil {
		ps = nil
	}
	st.stmts[query] = ps
	return ps
}

// prepareWanted prepares the queries met within the transaction that
// just ended.
func (st *SQL) prepareWanted() {
	for _, q := range st.wanted {
		if _, known := st.stmts[q]; !known && !st.closed {
			st.prepare1(q)
		}
	}
	clear(st.wanted)
	st.wanted = st.wanted[:0]
}

// saw notes what a read of the section may have seen, for needs: the row
// id (a lookup), or, for any other query, whatever any commit changed.
// Its own transaction's changes are its own commit's.
func (st *SQL) saw(id string) {
	switch {
	case id != "":
		st.need = max(st.need, st.dirty[id])
		if _, ok := st.changedIDs[id]; ok {
			st.secSaw = true
		}
	case !st.lookup:
		st.need = max(st.need, st.seq)
		st.secSaw = st.secSaw || st.changedMore || len(st.changedIDs) > 0
	}
}

// lookupBy runs f, a lookup of rows by id or ext_id (or the expiry
// queries, whose answer no reader writes, see end), as one that saw only
// the rows it loads.
func (st *SQL) lookupBy(f func()) {
	st.lookup = true
	f()
	st.lookup = false
}

// rows runs a query of the section; each row is handed to scan.
func (st *SQL) rows(scan func(*sql.Rows) error, query string, args ...any) {
	q := st.r()
	if q == nil {
		return
	}
	st.saw("")
	var rs *sql.Rows
	var err error
	if ps := st.stmt(query); ps != nil {
		rs, err = ps.Query(args...)
	} else {
		rs, err = q.Query(query, args...)
	}
	if err != nil {
		st.fail(err)
		return
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			st.fail(err)
			return
		}
	}
	st.fail(rs.Err())
}

func (st *SQL) one(dest []any, query string, args ...any) bool {
	q := st.r()
	if q == nil {
		return false
	}
	st.saw("")
	var row *sql.Row
	if ps := st.stmt(query); ps != nil {
		row = ps.QueryRow(args...)
	} else {
		row = q.QueryRow(query, args...)
	}
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false
	}
	st.fail(err)
	return err == nil
}

// forget drops what the store knew of the open transaction's changes: it
// is committed or rolled back.
func (st *SQL) forget() {
	clear(st.pm)
	clear(st.po)
	clear(st.wd)
	clear(st.changedIDs)
	st.changedMore, st.secWrote, st.secSaw = false, false, false
}

// Commit: see ledger.Txn.
func (st *SQL) Commit() error {
	defer st.forget() // after flushLazy's writes too
	if st.tx == nil {
		err := st.err
		st.err = nil
		if err != nil {
			st.ms.rollback()
			st.vals.rollback()
			return err
		}
		st.ms.commit() // nothing written: a Reset of nothing, or no change
		st.vals.commit()
		return nil
	}
	if st.wrote && st.err == nil {
		st.flushLazy(false)
	}
	tx, err, wrote := st.tx, st.err, st.wrote
	st.tx, st.err, st.wrote = nil, nil, false
	if err == nil && wrote {
		err = st.sameFile()
	}
	if err != nil {
		tx.Rollback()
		st.ms.rollback()
		st.vals.rollback()
		st.prepareWanted()
		if errors.Is(err, errWALMoved) {
			st.rescueWAL()
		}
		return err
	}
	err = tx.Commit()
	st.prepareWanted()
	if err != nil {
		st.ms.rollback()
		st.vals.rollback()
		return err
	}
	st.ms.commit()
	st.vals.commit()
	if !wrote {
		return nil
	}
	st.seq++
	st.need = st.seq
	if st.changedMore {
		st.moreSeq = st.seq
	}
	if len(st.changedIDs) > 0 && st.dirty == nil {
		st.dirty = map[string]uint64{}
	}
	for id := range st.changedIDs {
		st.dirty[id] = st.seq
	}
	return nil
}

// Rollback drops what the section did: its transaction and its copies.
func (st *SQL) Rollback() {
	st.forget()
	st.ms.rollback()
	st.vals.rollback()
	st.nextKnown = false // payments the transaction moved out of PENDING are back in it
	if st.tx != nil {
		st.tx.Rollback()
	}
	st.tx, st.err, st.wrote = nil, nil, false
	st.prepareWanted()
}

// sameFile checks that the path still names the file the store opened,
// and that its -wal file is still the one SQLite writes. SQLite keeps
// writing to an open file that was deleted (or renamed and replaced):
// every commit would succeed into a file no restart can find. Two stats
// per committed change, next to its fsync, and one per readiness probe
// (Ping): a removed file is seen by the next write or probe, whichever
// comes first.
func (st *SQL) sameFile() error {
	fi, err := os.Stat(st.path)
	if err == nil && os.SameFile(fi, st.ident) {
		return st.sameWAL()
	}
	why := "names another file"
	if err != nil {
		why = err.Error()
	}
	return fmt.Errorf("the database file %s was removed or replaced while the sandbox ran (%s): "+
		"nothing written now would be there at the next start", st.path, why)
}

// errWALMoved is wrapped by sameWAL's error: the -wal file's name no
// longer reaches the file SQLite writes.
var errWALMoved = errors.New("the WAL was removed or replaced while the sandbox ran")

// sameWAL checks that the -wal file's name still reaches the file opened
// beside the database (nil without deferSync: no WAL is kept open). The
// commits not yet copied into the database live only in that file: a
// restart would not find them.
func (st *SQL) sameWAL() error {
	if st.walIdent == nil {
		return nil
	}
	name := st.walPath
	now, err := os.Stat(name)
	if err == nil && os.SameFile(now, st.walIdent) {
		return nil
	}
	why := "names another file"
	if err != nil {
		why = err.Error()
	}
	return fmt.Errorf("%w: %s (%s): what it holds would not be there at the next start", errWALMoved, name, why)
}

// salvage keeps what can still be kept once the sandbox's store failed,
// called with no transaction open: when the -wal file's name no longer
// reaches the file SQLite writes (a sync found it so), its commits are
// copied into the database (rescueWAL). Anything else it leaves alone.
func (st *SQL) salvage() {
	if errors.Is(st.sameWAL(), errWALMoved) {
		st.rescueWAL()
	}
}

// rescueWAL copies every commit of a -wal file that was removed or
// replaced under the store into the database file, once, when no
// transaction is open: a checkpoint, which SQLite syncs. The commits
// acknowledged before the removal then survive a kill (they lived only in
// the unlinked file); nothing later is written (the sandbox refuses every
// change from then on, and is not ready). The -wal file SQLite opens at
// the next start is a new one.
func (st *SQL) rescueWAL() {
	if st.rescued || st.tx != nil || st.closed {
		return
	}
	st.rescued = true
	var busy, frames, copied int
	err := st.db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &copied)
	if err == nil && busy != 0 {
		err = errors.New("the checkpoint could not complete")
	}
	st.rescuedOK.Store(err == nil)
	if l := st.deps.Logger; l != nil {
		if err != nil {
			l.Error("the -wal file was removed or replaced: copying its commits into the database failed; "+
				"stop the sandbox gracefully (SIGTERM) to keep them", slog.String("error", err.Error()))
		} else {
			l.Warn("the -wal file was removed or replaced: its commits are copied into the database; "+
				"the sandbox refuses every change until restarted", slog.Int("frames", copied))
		}
	}
}

// Ping: see ledger.Txn.
func (st *SQL) Ping() error {
	if st.closed {
		return errors.New("database closed")
	}
	if err := st.sameFile(); err != nil {
		if errors.Is(err, errWALMoved) {
			st.rescueWAL()
		}
		return err
	}
	var v int
	if st.tx != nil { // within a section: the one connection is the transaction's
		return st.tx.QueryRow("PRAGMA user_version").Scan(&v)
	}
	return st.db.QueryRow("PRAGMA user_version").Scan(&v) // reads the file's header through the open file
}

// Close: see ledger.Txn.
func (st *SQL) Close() error {
	if st.closed {
		return nil
	}
	if st.tx == nil {
		st.wrote = true // write what is pending
		st.q()
	}
	st.flushLazy(true)
	err := st.Commit()
	st.closed = true
	for _, ps := range st.stmts {
		if ps != nil {
			ps.Close()
		}
	}
	if cerr := st.db.Close(); err == nil {
		err = cerr
	}
	st.walMu.Lock()
	defer st.walMu.Unlock()
	if st.wal != nil {
		// Closing checkpointed every commit into the database and synced
		// it: a section still waiting for its sync has it, unless that
		// failed.
		st.wal.Close()
		st.wal, st.walErr = nil, err
		if err != nil {
			st.walErr = fmt.Errorf("closing %s: %w", st.path, err)
		}
	}
	return err
}

// Begin: see Store. The SQL store's transaction is the store itself: its
// database transaction (begun by the first statement) and its copies.
func (st *SQL) Begin() Txn { return st }

// Value: see Txn.
func (st *SQL) Value(key string) any { return st.vals.get(key) }

// SetValue: see Txn.
func (st *SQL) SetValue(key string, x any) { st.vals.set(key, x) }
