package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
	"github.com/paykit-dev/paykit-go/sandbox/internal/webhook"
)

// SchemaVersion is the version of the database layout this sandbox writes,
// kept in PRAGMA user_version. A file of an older version is migrated when
// opened; one of a newer version is refused.
const SchemaVersion = 2

// ApplicationID marks a file as a paykit sandbox database (PRAGMA
// application_id), so that another program's SQLite file is refused
// rather than written into.
const ApplicationID = 0x706b7362 // "pksb"

// Migration is the SQL that takes a file from schema version v to v+1,
// for tests that build an old file by hand.
func Migration(v int) string { return migrations[v] }

// migrations[v] takes a file from version v to v+1.
var migrations = []string{
	// 0 -> 1: the resources, the terminals and the webhook outbox.
	`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE merchants (api_key TEXT PRIMARY KEY, transfers INTEGER NOT NULL DEFAULT 0);
CREATE TABLE terminals (api_key TEXT NOT NULL, id TEXT NOT NULL, pos INTEGER NOT NULL, name TEXT NOT NULL,
  balance TEXT NOT NULL, frozen TEXT NOT NULL, fee TEXT NOT NULL, active INTEGER NOT NULL, PRIMARY KEY (api_key, id));
CREATE TABLE payments (id TEXT PRIMARY KEY, api_key TEXT NOT NULL, terminal_id TEXT NOT NULL, ext_id TEXT NOT NULL,
  amount TEXT NOT NULL, amount_key TEXT NOT NULL, method TEXT NOT NULL, bank_code TEXT NOT NULL, bank_name TEXT NOT NULL,
  bank_country TEXT NOT NULL, req_type TEXT NOT NULL, req_value TEXT NOT NULL, holder TEXT NOT NULL,
  country TEXT NOT NULL, currency TEXT NOT NULL, amount_local TEXT NOT NULL, client_id TEXT NOT NULL,
  notify_url TEXT NOT NULL, token TEXT NOT NULL, status TEXT NOT NULL, valid_until INTEGER NOT NULL,
  created_at INTEGER NOT NULL, usdt_rate TEXT NOT NULL, payment_url TEXT NOT NULL, receipt INTEGER NOT NULL,
  dispute TEXT, UNIQUE (api_key, ext_id));
CREATE INDEX payments_expiry ON payments (status, valid_until);
CREATE INDEX payments_pending ON payments (api_key, status, amount_key);
CREATE INDEX payments_recent ON payments (created_at);
CREATE TABLE payouts (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, api_key TEXT NOT NULL, ext_id TEXT NOT NULL,
  amount TEXT NOT NULL, method TEXT NOT NULL, requisites TEXT NOT NULL, holder_name TEXT NOT NULL, bank TEXT NOT NULL,
  notify_url TEXT NOT NULL, status TEXT NOT NULL, provider_order_id TEXT NOT NULL, created_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL, UNIQUE (api_key, ext_id));
CREATE INDEX payouts_merchant ON payouts (api_key, seq);
CREATE INDEX payouts_status ON payouts (status);
CREATE TABLE withdrawals (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, api_key TEXT NOT NULL,
  terminal_id TEXT NOT NULL, amount TEXT NOT NULL, fee TEXT NOT NULL, held TEXT NOT NULL, address TEXT NOT NULL,
  tx_hash TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX withdrawals_merchant ON withdrawals (api_key, status);
CREATE INDEX withdrawals_status ON withdrawals (status);
CREATE TABLE deliveries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, key TEXT NOT NULL, url TEXT NOT NULL,
  token TEXT NOT NULL, body BLOB NOT NULL, rec TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX deliveries_state ON deliveries (state);`,
	// 1 -> 2: the request log survives a restart too.
	`CREATE TABLE reqlog (seq INTEGER PRIMARY KEY, rec TEXT NOT NULL);`,
}

// SQL keeps the sandbox in an SQLite file: a section's changes are
// committed when it ends, and synced to disk before its answer is written,
// with one sync of the -wal file shared by the sections that committed
// while the previous one ran (the sandbox's group commit, which asks
// DeferSync, LastCommit, Needs and SyncWAL). It holds in memory only the
// resources a section touched (cleared at commit), the merchants and
// terminals (as many as configured), and the lazy diagnostics described at
// CountersChanged. Besides the Store it is the journal of the sandbox's
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

	counters func() []Counter            // request counters not yet written (nil: none)
	reqs     [][]byte                    // request log lines not yet written
	diagN    int                         // commits since the counters and request lines were last written
	diagAt   time.Time                   // when they were last written (monotonic)
	dlv      map[string]webhook.Delivery // delivery records not yet written
	closed   bool

	// What the open transaction changed: the payments, payouts and
	// withdrawals it wrote, by id, and whether it wrote anything else
	// (the Server's memory: terminals, clock, faults, or the outbox).
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
	// Driver.DeferSync) and syncWAL syncs them, outside the Server's lock.
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
// configuration it builds merchants from, and the live merchant of an API
// key for the resources it loads. The store reads them and never writes
// the sandbox's memory: what it restores at start it returns (Restore).
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
	// Merchant is the caller's live merchant of apiKey (nil: not
	// configured), called within a transaction.
	Merchant func(apiKey string) *ledger.Merchant
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

// openWAL opens the -wal file SQLite wrote at prepare's commit, to sync it
// (a descriptor opened for reading syncs the file on Linux, whoever wrote
// it), and syncs its directory once, so that the file itself, not only
// its content, survives power loss. SQLite keeps the file, in
// locking_mode EXCLUSIVE, until the store closes; syncWAL checks that.
func openWAL(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening its WAL to sync it: %w", err)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err == nil {
		err = dir.Sync()
		dir.Close()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("syncing the directory of its WAL: %w", err)
	}
	return f, nil
}

// SyncWAL makes every commit returned so far durable: one fsync of the
// -wal file, which holds their frames (see groupCommit). It is called
// without the Server's lock, while other sections commit. It fails when
// the database's or the -wal file's name no longer reaches the file
// opened (sameFile), which SQLite would go on writing into unseen by a
// restart, unless the removed -wal file's commits were copied into the
// database (rescueWAL). After close it answers close's
// outcome: closing checkpointed the WAL into the database and synced it.
func (st *SQL) SyncWAL() error {
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

// DeferSync tells that a commit returns before it is on disk: SyncWAL
// makes it durable (the driver's Driver.DeferSync).
func (st *SQL) DeferSync() bool { return st.deferSync }

// MarkWritten makes the next Commit write and count as a change even when
// nothing changed since: opening commits a new file's merchants and
// terminals so.
func (st *SQL) MarkWritten() { st.wrote = true }

// DB is the database, for the tests that break it underneath.
func (st *SQL) DB() *sql.DB { return st.db }

// LastCommit is the sequence number of the last commit of a change.
func (st *SQL) LastCommit() uint64 { return st.seq }

// Pending says that the open transaction holds changes and nothing
// failed, so its commit may be left to a later section.
func (st *SQL) Pending() bool { return st.tx != nil && st.wrote && st.err == nil && !st.closed }

// Needs is the commit the section's answer waits for: its own last commit
// of a change, the commit that last changed a row it looked up, the last
// commit of all when it ran any other query, and the last commit that
// changed the Server's memory in any case (its reads go unseen by the
// store). What is at most synced needs no wait. It forgets what synced
// covers, and starts the next section.
func (st *SQL) Needs(synced uint64) uint64 {
	n := max(st.need, st.moreSeq)
	if st.Pending() && (st.secWrote || st.secSaw || st.changedMore) {
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

// readOnly says why the sandbox cannot write path, or create the journal
// SQLite keeps beside it ("" when it can): a read-only file, directory or
// volume (a container's :ro mount).
func readOnly(path string) string {
	denied := func(err error) bool { return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) }
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		if denied(err) {
			return "the file cannot be written"
		}
		return ""
	}
	f.Close()
	if f, err = os.CreateTemp(filepath.Dir(path), ".paykit-sandbox-probe-*"); err != nil {
		if denied(err) {
			return "its directory, where SQLite keeps the journal, cannot be written"
		}
		return ""
	}
	f.Close()
	os.Remove(f.Name())
	return ""
}

func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked") ||
		strings.Contains(msg, "(5)") || strings.Contains(msg, "(261)") || strings.Contains(msg, "(517)")
}

// prepare checks the file before anything is written to it, then migrates.
func (st *SQL) prepare() error {
	var version, app int64
	if err := st.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		if isBusy(err) {
			return FileError(st.path, "is held by another process (another sandbox on the same file?): refused, not shared")
		}
		return FileError(st.path, "is not a usable SQLite database, or is damaged (%v): refused and left untouched", err)
	}
	if err := st.db.QueryRow("PRAGMA application_id").Scan(&app); err != nil {
		return FileError(st.path, "cannot be read (%v): refused and left untouched", err)
	}
	var tables int
	if err := st.db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil {
		return FileError(st.path, "cannot be read (%v): refused and left untouched", err)
	}
	if tables > 0 && app != ApplicationID {
		return FileError(st.path, "is an SQLite database of another program (application_id %d): refused and left untouched", app)
	}
	if version > SchemaVersion {
		return FileError(st.path, "has schema version %d, newer than this sandbox's %d: run a newer paykit-sandbox "+
			"on it, or give -db another file; it was left untouched", version, SchemaVersion)
	}
	var check string
	if err := st.db.QueryRow("PRAGMA quick_check").Scan(&check); err != nil || check != "ok" {
		if err != nil {
			check = err.Error()
		}
		return FileError(st.path, "is damaged: its integrity check fails (%s): refused and left untouched; restore a backup or "+
			"start on a new file", check)
	}
	var mode string
	if err := st.db.QueryRow("PRAGMA journal_mode=WAL").Scan(&mode); err != nil || mode != "wal" {
		if err != nil && isBusy(err) {
			return FileError(st.path, "is held by another process (another sandbox on the same file?): refused, not shared")
		}
		return FileError(st.path, "cannot be put in WAL mode (%v, mode %q)", err, mode)
	}
	tx, err := st.db.Begin() // BEGIN IMMEDIATE: takes the write lock, kept until close
	if err != nil {
		if isBusy(err) {
			return FileError(st.path, "is held by another process (another sandbox on the same file?): refused, not shared")
		}
		return FileError(st.path, "%v", err)
	}
	defer tx.Rollback()
	for v := version; v < SchemaVersion; v++ {
		if _, err := tx.Exec(migrations[v]); err != nil {
			return FileError(st.path, "migrating from schema version %d: %v", v, err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", SchemaVersion, ApplicationID)); err != nil {
		return FileError(st.path, "%v", err)
	}
	if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES ('opened_at', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return FileError(st.path, "%v", err)
	}
	if err := tx.Commit(); err != nil {
		return FileError(st.path, "%v", err)
	}
	return nil
}

// decText writes a decimal so that it reads back with its scale: 1500.50
// stays 1500.50 (the API answers amounts with the scale they were given).
func decText(d decimal.Decimal) string {
	if e := d.Exponent(); e > 0 {
		return d.Coefficient().String() + "e" + strconv.Itoa(int(e))
	}
	return d.StringFixed(-d.Exponent())
}

func (st *SQL) undec(s string) decimal.Decimal {
	d, err := decimal.NewFromString(s)
	if err != nil {
		st.fail(fmt.Errorf("stored amount %q: %w", s, err))
	}
	return d
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func unnanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
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

// ---- merchants and terminals

// Merchants: see ledger.Store.
func (st *SQL) Merchants() map[string]*merchant {
	start := st.deps.Start()
	ms := byKey(start)
	for _, m := range start {
		var stored []*terminal
		st.rows(func(r *sql.Rows) error {
			var t terminal
			var bal, frz, fee string
			var active int
			if err := r.Scan(&t.ID, &t.Name, &bal, &frz, &fee, &active); err != nil {
				return err
			}
			t.Available, t.Frozen, t.Fee, t.Active = st.undec(bal), st.undec(frz), st.undec(fee), active != 0
			stored = append(stored, &t)
			return nil
		}, `SELECT id, name, balance, frozen, fee, active FROM terminals WHERE api_key = ? ORDER BY pos`, m.APIKey)
		if stored == nil {
			st.insertMerchant(m)
			continue
		}
		// Compared with the start the file was made from, not with today's
		// balances, which payments and transfers have moved since.
		var start string
		st.meta("start:"+m.APIKey, &start)
		configured := terminalsText(m.Terminals)
		if start == "" { // a file from before starts were recorded: this one is its start from now on
			st.setMeta("start:"+m.APIKey, configured)
			start = configured
		}
		if configured != start && st.deps.Logger != nil {
			st.deps.Logger.Warn("the configured terminals differ from the start this database was made from: the stored "+
				"terminals and balances are kept and the configuration is IGNORED for them (POST /sandbox/reset applies it, "+
				"dropping every resource; or give -db a new file)",
				slog.String("merchant", st.deps.MaskKey(m.APIKey)), slog.String("configured", configured),
				slog.String("file_start", start), slog.String("stored_now", terminalsText(stored)))
		}
		m.Terminals = stored
		st.one([]any{&m.Transfers}, `SELECT transfers FROM merchants WHERE api_key = ?`, m.APIKey)
	}
	var gone []string
	st.rows(func(r *sql.Rows) error {
		var k string
		if err := r.Scan(&k); err != nil {
			return err
		}
		if ms[k] == nil {
			gone = append(gone, st.deps.MaskKey(k))
		}
		return nil
	}, `SELECT api_key FROM merchants ORDER BY api_key`)
	if len(gone) > 0 && st.deps.Logger != nil {
		st.deps.Logger.Warn("merchants in the database are not in the configuration: their resources are kept "+
			"in the file but not served until they are configured again", slog.String("merchants", strings.Join(gone, ", ")))
	}
	return ms
}

func terminalsText(ts []*terminal) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s balance %s frozen %s fee %s active %t", t.ID, decText(t.Available), decText(t.Frozen), decText(t.Fee), t.Active)
	}
	return b.String()
}

func (st *SQL) insertMerchant(m *merchant) {
	st.exec(`INSERT INTO merchants (api_key, transfers) VALUES (?, ?)
		ON CONFLICT (api_key) DO UPDATE SET transfers = excluded.transfers`, m.APIKey, m.Transfers)
	st.exec(`DELETE FROM terminals WHERE api_key = ?`, m.APIKey)
	st.setMeta("start:"+m.APIKey, terminalsText(m.Terminals))
	for i, t := range m.Terminals {
		st.exec(`INSERT INTO terminals (api_key, id, pos, name, balance, frozen, fee, active) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			m.APIKey, t.ID, i, t.Name, decText(t.Available), decText(t.Frozen), decText(t.Fee), boolInt(t.Active))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SaveTerminal: see ledger.Store.
func (st *SQL) SaveTerminal(m *merchant, t *terminal) {
	st.exec(`UPDATE terminals SET balance = ?, frozen = ? WHERE api_key = ? AND id = ?`,
		decText(t.Available), decText(t.Frozen), m.APIKey, t.ID)
}

// SaveMerchant: see ledger.Store.
func (st *SQL) SaveMerchant(m *merchant) {
	st.exec(`UPDATE merchants SET transfers = ? WHERE api_key = ?`, m.Transfers, m.APIKey)
}

// Reset: see ledger.Store.
func (st *SQL) Reset() map[string]*merchant {
	st.nextKnown = false
	for _, t := range []string{"payments", "payouts", "withdrawals", "merchants", "terminals"} {
		st.exec("DELETE FROM " + t)
	}
	st.exec(`DELETE FROM meta WHERE key IN ('offset', 'faults', 'counters') OR key LIKE 'start:%'`)
	clear(st.pm)
	clear(st.po)
	clear(st.wd)
	st.counters = nil
	start := st.deps.Start()
	for _, m := range start {
		st.insertMerchant(m)
	}
	return byKey(start)
}

// ---- payments

const paymentCols = `id, api_key, terminal_id, ext_id, amount, method, bank_code, bank_name, bank_country,
	req_type, req_value, holder, country, currency, amount_local, client_id, notify_url, token, status,
	valid_until, created_at, usdt_rate, payment_url, receipt, dispute`

type storedDispute struct {
	Amount     *string `json:"amount,omitempty"`
	ReceiptURL string  `json:"receipt_url"`
	Comment    string  `json:"comment"`
	CreatedAt  int64   `json:"created_at"`
}

func (st *SQL) scanPayment(r interface{ Scan(...any) error }) (*payment, error) {
	var p payment
	var apiKey, termID, amount, amountLoc, rate string
	var validUntil, createdAt int64
	var disp sql.NullString
	if err := r.Scan(&p.ID, &apiKey, &termID, &p.ExtID, &amount, &p.Method, &p.Bank.Code, &p.Bank.Name, &p.Bank.Country,
		&p.ReqType, &p.ReqValue, &p.Holder, &p.Country, &p.Currency, &amountLoc, &p.ClientID, &p.NotifyURL, &p.Token,
		&p.Status, &validUntil, &createdAt, &rate, &p.PaymentURL, &p.Receipt, &disp); err != nil {
		return nil, err
	}
	p.Bank.IsActive = true // it offered requisites when the payment was made
	if b, ok := findBank(st.deps.Banks, p.Bank.Code); ok {
		p.Bank = b
	}
	p.Amount, p.AmountLocal, p.USDTRate = st.undec(amount), st.undec(amountLoc), st.undec(rate)
	p.ValidUntil, p.CreatedAt = unnanos(validUntil), unnanos(createdAt)
	if disp.Valid {
		var d storedDispute
		if err := json.Unmarshal([]byte(disp.String), &d); err != nil {
			return nil, fmt.Errorf("stored dispute of payment %s: %w", p.ID, err)
		}
		p.Dispute = &dispute{ReceiptURL: d.ReceiptURL, Comment: d.Comment, CreatedAt: unnanos(d.CreatedAt)}
		if d.Amount != nil {
			a := st.undec(*d.Amount)
			p.Dispute.Amount = &a
		}
	}
	p.Merchant = st.deps.Merchant(apiKey)
	if p.Merchant == nil {
		return nil, nil // a merchant no longer configured: its payments are out of reach
	}
	p.Terminal = p.Merchant.Terminal(termID)
	if p.Terminal == nil {
		return nil, nil
	}
	return &p, nil
}

func (st *SQL) loadPayments(where string, args ...any) []*payment {
	var out []*payment
	st.rows(func(r *sql.Rows) error {
		p, err := st.scanPayment(r)
		if err != nil {
			return err
		}
		if p != nil {
			st.saw(p.ID)
			out = append(out, sectionCopy(&st.pm, p.ID, p))
		}
		return nil
	}, "SELECT "+paymentCols+" FROM payments "+where, args...)
	return out
}

// Payment: see ledger.Store.
func (st *SQL) Payment(id string) (p *payment) {
	if p := st.pm[id]; p != nil {
		return p
	}
	st.lookupBy(func() { p = firstOf(st.loadPayments("WHERE id = ?", id)) })
	return p
}

// PaymentByExt: see ledger.Store.
func (st *SQL) PaymentByExt(m *merchant, extID string) (p *payment) {
	st.lookupBy(func() { p = firstOf(st.loadPayments("WHERE api_key = ? AND ext_id = ?", m.APIKey, extID)) })
	return p
}

func (st *SQL) disputeJSON(p *payment) any {
	if p.Dispute == nil {
		return nil
	}
	d := storedDispute{ReceiptURL: p.Dispute.ReceiptURL, Comment: p.Dispute.Comment, CreatedAt: nanos(p.Dispute.CreatedAt)}
	if p.Dispute.Amount != nil {
		a := decText(*p.Dispute.Amount)
		d.Amount = &a
	}
	b, _ := json.Marshal(d)
	return string(b)
}

// AddPayment: see ledger.Store.
func (st *SQL) AddPayment(p *payment) {
	sectionCopy(&st.pm, p.ID, p)
	st.pendingUntil(p)
	st.execRow(p.ID, `INSERT INTO payments (`+paymentCols+`, amount_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Merchant.APIKey, p.Terminal.ID, p.ExtID, decText(p.Amount), p.Method, p.Bank.Code, p.Bank.Name, p.Bank.Country,
		p.ReqType, p.ReqValue, p.Holder, p.Country, p.Currency, decText(p.AmountLocal), p.ClientID, p.NotifyURL, p.Token,
		p.Status, nanos(p.ValidUntil), nanos(p.CreatedAt), decText(p.USDTRate), p.PaymentURL, p.Receipt, st.disputeJSON(p),
		ledger.AmountKey(p.Amount))
}

// SavePayment: see ledger.Store.
func (st *SQL) SavePayment(p *payment) {
	st.pendingUntil(p)
	st.execRow(p.ID, `UPDATE payments SET status = ?, receipt = ?, dispute = ? WHERE id = ?`,
		p.Status, p.Receipt, st.disputeJSON(p), p.ID)
}

// PendingWithAmount: see ledger.Store.
func (st *SQL) PendingWithAmount(m *merchant, key string) int {
	var n int
	// Counted up to the cap only: the rule asks "at the cap yet?", and a
	// count of every match would make each create slower than the last.
	// The cap is in the text, not bound: SQLite prepares a statement whose
	// LIMIT is a parameter again at every bind.
	st.one([]any{&n}, `SELECT count(*) FROM (SELECT 1 FROM payments WHERE api_key = ? AND status = ? AND amount_key = ? LIMIT `+
		strconv.Itoa(st.deps.MaxSamePending)+`)`, m.APIKey, statusPending, key)
	return n
}

// DueExpiry: see ledger.Store. It and NextExpiry run in every API
// section. Their answers do not reach a reader's: what expires is changed
// (the section then waits for its commit), and the next expiry only arms
// a timer that looks again. So they are lookups: a reader waits only for
// the changed rows they load.
func (st *SQL) DueExpiry(now time.Time, limit int) (due []*payment) {
	if st.nextKnown && (st.next.IsZero() || now.Before(st.next)) {
		return nil
	}
	st.nextKnown = false // the caller moves what is due: nextExpiry asks the file again
	st.lookupBy(func() {
		due = st.loadPayments("WHERE status = ? AND valid_until <= ? ORDER BY valid_until, id LIMIT ?",
			statusPending, now.UnixNano(), limit)
	})
	return due
}

// NextExpiry: see ledger.Store.
func (st *SQL) NextExpiry() (next time.Time, ok bool) {
	if st.nextKnown {
		return st.next, !st.next.IsZero()
	}
	var n sql.NullInt64
	st.lookupBy(func() {
		ok = st.one([]any{&n}, `SELECT min(valid_until) FROM payments WHERE status = ?`, statusPending)
	})
	if ok && n.Valid {
		next = unnanos(n.Int64)
	}
	st.next, st.nextKnown = next, st.err == nil
	return next, !next.IsZero()
}

// pendingUntil keeps next a lower bound when p is PENDING: a payment
// leaving PENDING only moves the earliest valid_until later, which makes
// next early, and an early answer costs one query (dueExpiry) or one timer
// that finds nothing due and asks again.
func (st *SQL) pendingUntil(p *payment) {
	if st.nextKnown && p.Status == statusPending && (st.next.IsZero() || p.ValidUntil.Before(st.next)) {
		st.next = p.ValidUntil
	}
}

// RecentPayments: see ledger.Store.
func (st *SQL) RecentPayments(limit int) []*payment {
	return st.loadPayments("ORDER BY created_at DESC, ext_id, id LIMIT ?", limit)
}

// ---- payouts

const payoutCols = `id, api_key, ext_id, amount, method, requisites, holder_name, bank, notify_url, status,
	provider_order_id, created_at, completed_at`

func (st *SQL) loadPayouts(where string, args ...any) []*payout {
	var out []*payout
	st.rows(func(r *sql.Rows) error {
		var p payout
		var apiKey, amount string
		var created, completed int64
		if err := r.Scan(&p.ID, &apiKey, &p.ExtID, &amount, &p.Method, &p.Requisites, &p.HolderName, &p.Bank,
			&p.NotifyURL, &p.Status, &p.ProviderOrderID, &created, &completed); err != nil {
			return err
		}
		p.Amount, p.CreatedAt, p.CompletedAt = st.undec(amount), unnanos(created), unnanos(completed)
		if p.Merchant = st.deps.Merchant(apiKey); p.Merchant == nil {
			return nil
		}
		st.saw(p.ID)
		out = append(out, sectionCopy(&st.po, p.ID, &p))
		return nil
	}, "SELECT "+payoutCols+" FROM payouts "+where, args...)
	return out
}

// Payout: see ledger.Store.
func (st *SQL) Payout(id string) (p *payout) {
	if p := st.po[id]; p != nil {
		return p
	}
	st.lookupBy(func() { p = firstOf(st.loadPayouts("WHERE id = ?", id)) })
	return p
}

// PayoutByExt: see ledger.Store.
func (st *SQL) PayoutByExt(m *merchant, extID string) (p *payout) {
	st.lookupBy(func() { p = firstOf(st.loadPayouts("WHERE api_key = ? AND ext_id = ?", m.APIKey, extID)) })
	return p
}

// AddPayout: see ledger.Store.
func (st *SQL) AddPayout(p *payout) {
	sectionCopy(&st.po, p.ID, p)
	st.execRow(p.ID, `INSERT INTO payouts (`+payoutCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Merchant.APIKey, p.ExtID, decText(p.Amount), p.Method, p.Requisites, p.HolderName, p.Bank, p.NotifyURL,
		p.Status, p.ProviderOrderID, nanos(p.CreatedAt), nanos(p.CompletedAt))
}

// SavePayout: see ledger.Store.
func (st *SQL) SavePayout(p *payout) {
	st.execRow(p.ID, `UPDATE payouts SET status = ?, provider_order_id = ?, completed_at = ? WHERE id = ?`,
		p.Status, p.ProviderOrderID, nanos(p.CompletedAt), p.ID)
}

// payoutWhere is the query of f.
func payoutWhere(f ledger.PayoutFilter, apiKey string) (string, []any) {
	where, args := "WHERE api_key = ?", []any{apiKey}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, f.Status)
	}
	if !f.From.IsZero() {
		where += " AND created_at >= ?"
		args = append(args, boundNanos(f.From))
	}
	if !f.To.IsZero() {
		where += " AND created_at <= ?"
		args = append(args, boundNanos(f.To))
	}
	return where, args
}

// Beyond these an int64 of nanoseconds cannot hold a time (UnixNano's
// answer is undefined): a bound past them, as GET /v1/payouts?to=9999-12-31
// gives, is clamped to the int64 at that end, which orders the same way
// against every created_at the file can hold.
var (
	minNanosTime = time.Unix(0, math.MinInt64)
	maxNanosTime = time.Unix(0, math.MaxInt64)
)

// boundNanos is t as a created_at bound.
func boundNanos(t time.Time) int64 {
	switch {
	case t.Before(minNanosTime):
		return math.MinInt64
	case t.After(maxNanosTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// ListPayouts: see ledger.Store.
func (st *SQL) ListPayouts(m *merchant, f ledger.PayoutFilter, limit, offset int) ([]*payout, int) {
	where, args := payoutWhere(f, m.APIKey)
	var total int
	st.one([]any{&total}, "SELECT count(*) FROM payouts "+where, args...)
	if total <= offset || limit == 0 {
		return nil, total
	}
	return st.loadPayouts(where+" ORDER BY seq LIMIT ? OFFSET ?", append(args, limit, offset)...), total
}

// RecentPayouts: see ledger.Store.
func (st *SQL) RecentPayouts(limit int) []*payout {
	return st.loadPayouts("ORDER BY seq DESC LIMIT ?", limit)
}

// ---- withdrawals

const withdrawalCols = `id, api_key, terminal_id, amount, fee, held, address, tx_hash, status, created_at, updated_at`

func (st *SQL) loadWithdrawals(where string, args ...any) []*withdrawal {
	var out []*withdrawal
	st.rows(func(r *sql.Rows) error {
		var w withdrawal
		var apiKey, termID, amount, fee, held string
		var created, updated int64
		if err := r.Scan(&w.ID, &apiKey, &termID, &amount, &fee, &held, &w.Address, &w.TxHash, &w.Status,
			&created, &updated); err != nil {
			return err
		}
		w.Amount, w.Fee, w.Held = st.undec(amount), st.undec(fee), st.undec(held)
		w.CreatedAt, w.UpdatedAt = unnanos(created), unnanos(updated)
		if w.Merchant = st.deps.Merchant(apiKey); w.Merchant == nil {
			return nil
		}
		if w.Terminal = w.Merchant.Terminal(termID); w.Terminal == nil {
			return nil
		}
		st.saw(w.ID)
		out = append(out, sectionCopy(&st.wd, w.ID, &w))
		return nil
	}, "SELECT "+withdrawalCols+" FROM withdrawals "+where, args...)
	return out
}

// Withdrawal: see ledger.Store.
func (st *SQL) Withdrawal(id string) (w *withdrawal) {
	if w := st.wd[id]; w != nil {
		return w
	}
	st.lookupBy(func() { w = firstOf(st.loadWithdrawals("WHERE id = ?", id)) })
	return w
}

// AddWithdrawal: see ledger.Store.
func (st *SQL) AddWithdrawal(w *withdrawal) {
	sectionCopy(&st.wd, w.ID, w)
	st.execRow(w.ID, `INSERT INTO withdrawals (`+withdrawalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.Merchant.APIKey, w.Terminal.ID, decText(w.Amount), decText(w.Fee), decText(w.Held), w.Address, w.TxHash, w.Status,
		nanos(w.CreatedAt), nanos(w.UpdatedAt))
}

// SaveWithdrawal: see ledger.Store.
func (st *SQL) SaveWithdrawal(w *withdrawal) {
	st.execRow(w.ID, `UPDATE withdrawals SET status = ?, tx_hash = ?, updated_at = ? WHERE id = ?`,
		w.Status, w.TxHash, nanos(w.UpdatedAt), w.ID)
}

// RecentWithdrawals: see ledger.Store.
func (st *SQL) RecentWithdrawals(limit int) []*withdrawal {
	return st.loadWithdrawals("ORDER BY created_at DESC, id LIMIT ?", limit)
}

// ---- counts and the autopilot

func (st *SQL) countBy(table, apiKey string) map[string]int {
	out := map[string]int{}
	st.rows(func(r *sql.Rows) error {
		var status string
		var n int
		if err := r.Scan(&status, &n); err != nil {
			return err
		}
		out[status] = n
		return nil
	}, "SELECT status, count(*) FROM "+table+" WHERE api_key = ? GROUP BY status", apiKey)
	return out
}

// Counts: see ledger.Store.
func (st *SQL) Counts(m *merchant) (map[string]int, map[string]int, map[string]int) {
	return st.countBy("payments", m.APIKey), st.countBy("payouts", m.APIKey), st.countBy("withdrawals", m.APIKey)
}

// InFlight: see ledger.Store. In creation order, as the memory store
// answers: without ORDER BY the order would be whichever index SQLite
// picks.
func (st *SQL) InFlight() ([]*payment, []*payout, []*withdrawal) {
	return st.loadPayments("WHERE status IN (?, ?, ?) ORDER BY created_at, id", statusPending, statusProcessing, statusDispute),
		st.loadPayouts("WHERE status IN (?, ?) ORDER BY seq", ledger.PayoutPending, ledger.PayoutProcessing),
		st.loadWithdrawals("WHERE status IN (?, ?) ORDER BY created_at, id", ledger.WithdrawalPending, ledger.WithdrawalProcessing)
}

// ---- clock, faults, diagnostics

func (st *SQL) setMeta(key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		st.fail(err)
		return
	}
	st.exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, string(b))
}

func (st *SQL) meta(key string, v any) bool {
	var s string
	if !st.one([]any{&s}, `SELECT value FROM meta WHERE key = ?`, key) {
		return false
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		st.fail(fmt.Errorf("stored %s: %w", key, err)) // says which record refuses the file
	}
	return true
}

// The journal: the sandbox's diagnostics, kept with the resources' next
// commit (package sandbox's journal interface calls these).

// SaveOffset records the clock offset.
func (st *SQL) SaveOffset(d time.Duration) { st.setMeta("offset", int64(d)) }

// SaveFaults records the armed faults, as the sandbox encodes them (JSON).
func (st *SQL) SaveFaults(encoded []byte) { st.setMeta("faults", json.RawMessage(encoded)) }

// CountersChanged and LogRequest keep diagnostics: they are written with
// a commit that changes state anyway (and at close), never with an fsync
// of their own, so a GET costs no disk write; and only with the first such
// commit after DiagEvery commits or diagAfter since they were last written,
// so that a busy sandbox does not rewrite the counters' row and the request
// log's pages with every change. A kill loses the request lines and
// counts of at most that interval before the last change and those after
// it, never a resource. CountersChanged says the request counters
// changed; counters gives them when they are written.
func (st *SQL) CountersChanged(counters func() []Counter) { st.counters = counters }

// LogRequest records one line of the request log, as the sandbox encodes
// it (JSON).
func (st *SQL) LogRequest(encoded []byte) {
	st.reqs = append(st.reqs, encoded)
	if len(st.reqs) > st.deps.RequestLogSize {
		st.reqs = st.reqs[len(st.reqs)-st.deps.RequestLogSize:]
	}
}

// Outbox: see Store.
func (st *SQL) Outbox(key string, o webhook.Outgoing) {
	rec, err := json.Marshal(o.Rec)
	if err != nil {
		st.fail(err)
		return
	}
	// Keyed by the delivery's id: no section reads the outbox back (the
	// dispatcher keeps its own log), only a start does.
	st.execRow(o.Rec.ID, `INSERT INTO deliveries (id, key, url, token, body, rec, state) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		o.Rec.ID, key, o.URL, o.Token, o.Body, string(rec), o.Rec.State)
}

// DeliveryUpdated records a delivery's attempts and state: an attempt
// lazily (written with the next commit of a change), an end so that the
// next Commit writes it even when nothing else changed (the sandbox
// commits it at once: a delivery not recorded as ended is sent again at
// the next start). Neither makes a section wait for its sync: the
// delivery log is a diagnostic nobody's answer reads.
func (st *SQL) DeliveryUpdated(rec webhook.Delivery) {
	if st.closed {
		return
	}
	if st.dlv == nil {
		st.dlv = map[string]webhook.Delivery{}
	}
	st.dlv[rec.ID] = rec
	if rec.State != webhook.Pending && st.q() != nil {
		st.wrote = true
	}
}

// DiagEvery and diagAfter say how often a commit carries the request
// counters and log lines (see CountersChanged): they bound what a kill
// loses of them, and how many times one page of the request log is
// rewritten.
const (
	DiagEvery = 64
	diagAfter = 200 * time.Millisecond
)

// flushLazy writes the diagnostics gathered since the last commit: the
// deliveries' records always, the counters and request lines when all or
// when they are due (DiagEvery, diagAfter).
func (st *SQL) flushLazy(all bool) {
	st.lazy = true
	defer func() { st.lazy = false }()
	st.diagN++
	if !all && st.diagN < DiagEvery && time.Since(st.diagAt) < diagAfter {
		st.flushDeliveries()
		return
	}
	st.diagN, st.diagAt = 0, time.Now()
	if st.counters != nil {
		c := st.counters()
		if c == nil {
			c = []Counter{}
		}
		st.setMeta("counters", c)
		st.counters = nil
	}
	if len(st.reqs) > 0 {
		for _, r := range st.reqs {
			st.exec(`INSERT INTO reqlog (rec) VALUES (?)`, string(r))
		}
		st.reqs = st.reqs[:0]
		st.exec(`DELETE FROM reqlog WHERE seq <= (SELECT max(seq) FROM reqlog) - ?`, st.deps.RequestLogSize)
	}
	st.flushDeliveries()
}

// flushDeliveries writes the deliveries' records gathered since the last
// commit: with every change, as a delivery not recorded as ended is sent
// again at the next start.
func (st *SQL) flushDeliveries() {
	if len(st.dlv) > 0 {
		for id, rec := range st.dlv {
			b, _ := json.Marshal(rec)
			st.exec(`UPDATE deliveries SET rec = ?, state = ? WHERE id = ?`, string(b), rec.State, id)
		}
		clear(st.dlv)
		// The log keeps the newest DeliveryLogSize deliveries, as
		// in memory; one still owed stays whatever its age.
		st.exec(`DELETE FROM deliveries WHERE state <> ? AND seq <= (SELECT max(seq) FROM deliveries) - ?`,
			webhook.Pending, st.deps.DeliveryLogSize)
	}
}

// Counter is one request counter of the journal: how many requests one
// method and route template had.
type Counter struct {
	// Method is the HTTP method, or OTHER.
	Method string `json:"method"`
	// Route is the route template that served them.
	Route string `json:"route"`
	// N is how many.
	N int `json:"n"`
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

// Commit: see ledger.Store.
func (st *SQL) Commit() error {
	defer st.forget() // after flushLazy's writes too
	if st.tx == nil {
		err := st.err
		st.err = nil
		return err
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
		st.prepareWanted()
		if errors.Is(err, errWALMoved) {
			st.rescueWAL()
		}
		return err
	}
	err = tx.Commit()
	st.prepareWanted()
	if err != nil || !wrote {
		return err
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

// Salvage keeps what can still be kept once the sandbox's store failed,
// called with no transaction open: when the -wal file's name no longer
// reaches the file SQLite writes (a sync found it so), its commits are
// copied into the database (rescueWAL). Anything else it leaves alone.
func (st *SQL) Salvage() {
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

// Ping: see ledger.Store.
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

// Close: see ledger.Store.
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

// ---- restoring at start

// Restored is what a file gives back at start besides the resources: the
// journal, for the caller to take back into its memory.
type Restored struct {
	// Offset is the clock offset.
	Offset time.Duration
	// Faults are the armed faults as SaveFaults was given them (nil: none
	// recorded).
	Faults []byte
	// Counters are the request counters.
	Counters []Counter
	// RequestLog is the request log, oldest first, at most
	// RequestLogSize lines, each as LogRequest was given it.
	RequestLog [][]byte
	// Deliveries are the deliveries still owed and the newest
	// DeliveryLogSize others, oldest first.
	Deliveries []webhook.Stored
}

// Restore reads the clock offset, faults, counters, the request log and
// the deliveries back.
func (st *SQL) Restore() Restored {
	var out Restored
	var off int64
	if st.meta("offset", &off) {
		out.Offset = time.Duration(off)
	}
	var faults json.RawMessage
	if st.meta("faults", &faults) {
		out.Faults = faults
	}
	st.meta("counters", &out.Counters)
	st.rows(func(r *sql.Rows) error {
		var b []byte
		if err := r.Scan(&b); err != nil {
			return err
		}
		out.RequestLog = append(out.RequestLog, b)
		return nil
	}, `SELECT rec FROM (SELECT seq, rec FROM reqlog ORDER BY seq DESC LIMIT ?) ORDER BY seq`, st.deps.RequestLogSize)
	st.rows(func(r *sql.Rows) error {
		var sd webhook.Stored
		var rec string
		var seq int64
		sd.Out.Rec = &webhook.Delivery{}
		if err := r.Scan(&seq, &sd.Key, &sd.Out.URL, &sd.Out.Token, &sd.Out.Body, &rec); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(rec), sd.Out.Rec); err != nil {
			return fmt.Errorf("stored delivery %d: %w", seq, err)
		}
		out.Deliveries = append(out.Deliveries, sd)
		return nil
	}, `SELECT seq, key, url, token, body, rec FROM deliveries
		WHERE state = ? OR seq > (SELECT coalesce(max(seq), 0) FROM deliveries) - ? ORDER BY seq`,
		webhook.Pending, st.deps.DeliveryLogSize)
	return out
}
