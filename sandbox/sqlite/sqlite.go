// Package sqlite registers the SQLite store of package sandbox, for
// Config.DBPath (and paykit-sandbox's -db). It is imported for its side
// effect only, as a database/sql driver is:
//
//	import _ "github.com/paykit-dev/paykit-go/sandbox/sqlite"
//
// It is the only package of the module that imports the SQLite driver
// (modernc.org/sqlite: pure Go, so a binary stays CGO-free). Package
// sandbox and sandboxtest do not, so a merchant's tests, which keep the
// sandbox in memory, never compile SQLite; a program that sets DBPath
// without this import gets an error from sandbox.Open that names it.
package sqlite

import (
	"database/sql"
	"strings"

	"github.com/paykit-dev/paykit-go/sandbox/internal/store"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver
)

func init() {
	store.Register(store.Driver{Name: "SQLite (modernc.org/sqlite)", Open: open, DeferSync: true})
}

// open opens path with the connection settings the sandbox's SQL store
// relies on. locking_mode EXCLUSIVE: once written, the file stays locked
// until the store closes, so a second sandbox on it fails at once instead
// of sharing it; SQLite then keeps one -wal file, never deleted or
// truncated, until it closes. synchronous NORMAL with WAL (the store puts
// the file in WAL mode): a commit writes its frames to the -wal file
// without syncing it, and the store syncs that file itself, outside its
// lock, before any answer that depends on the commit is written
// (DeferSync): power loss cannot take an acknowledged change, as with
// synchronous FULL, but concurrent writers share one fsync. SQLite still
// syncs the WAL before every checkpoint, the database after it, and the
// WAL header it writes when it restarts the WAL after a checkpoint.
// busy_timeout 0: a held file is refused now, not after a wait.
// _txlock=immediate: a section's transaction takes the write lock when it
// begins.
func open(path string) (*sql.DB, error) {
	dsn := "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path) +
		"?_pragma=busy_timeout(0)&_pragma=locking_mode(EXCLUSIVE)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	return sql.Open("sqlite", dsn)
}
