// Package store owns the sandbox's state and the transaction it is
// changed in: Begin returns the transaction the ledger's rules take
// (ledger.Txn: read and write views of payments, payouts, withdrawals,
// the merchants with their terminals' balances and transfer counters),
// with the outbox of webhook deliveries and the sandbox's own state (the
// clock offset, the armed faults) beside them. Memory, Go maps for a
// sandbox without a database, and SQL, an SQLite file written through
// database/sql. Both hand out copies and keep only what is saved, so a
// rule that forgets a save loses its change in memory as on a file
// (package storetest holds both to it), and a transaction rolled back
// (a commit that failed) leaves nothing of it visible. SQL also keeps the
// sandbox's diagnostics, its journal, in the same transactions.
//
// With a driver that defers the sync (Driver.DeferSync, as sandbox/sqlite
// registers it), an SQL commit returns before it is on disk: Group, the
// group commit, syncs the -wal file outside its lock, once for every
// commit made before the sync began, and answers none of them before it
// returns.
//
// The package imports no driver: package sandbox/sqlite registers one
// (Register), in the manner of database/sql, and the sandbox passes it to
// OpenSQL, so a merchant's tests that use sandboxtest never compile one.
// It knows nothing of package sandbox or of HTTP: what it needs of the
// sandbox (the configured merchants, banks, logger, caps) is passed in.
package store

import (
	"database/sql"
	"sync"
)

// Driver is a database driver registered for Config.DBPath.
type Driver struct {
	// Name says which driver this is, for errors and logs.
	Name string
	// Open opens the database file at path with the settings the SQL store
	// relies on (one exclusive lock held while open, a commit durable
	// before it returns unless DeferSync, a write transaction taken at
	// BEGIN, no busy wait). It must not touch the file: the SQL store
	// checks it first.
	Open func(path string) (*sql.DB, error)
	// DeferSync says that Open's database is in WAL mode and a commit
	// returns once its frames are written to path+"-wal", before they are
	// synced, while the driver still syncs the WAL before a checkpoint and
	// the database after it (SQLite's synchronous=NORMAL). The sync of
	// each commit is then Group's: it syncs the -wal file outside its
	// lock, once for every commit made before that sync began, and answers
	// none of them before it returns, as durable as a sync in every commit.
	DeferSync bool
}

var (
	mu         sync.Mutex
	registered *Driver
)

// Register makes d the driver of Config.DBPath. It panics when d has no
// Open or a driver is already registered: both are programming errors, as
// a duplicate sql.Register is.
func Register(d Driver) {
	if d.Open == nil {
		panic("sandbox/internal/store: Register of a driver without Open")
	}
	mu.Lock()
	defer mu.Unlock()
	if registered != nil {
		panic("sandbox/internal/store: Register called twice (driver " + registered.Name + " already registered)")
	}
	registered = &d
}

// Registered returns the registered driver, or false when none is.
func Registered() (Driver, bool) {
	mu.Lock()
	defer mu.Unlock()
	if registered == nil {
		return Driver{}, false
	}
	return *registered, true
}
