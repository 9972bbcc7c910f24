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
	store.Register(store.Driver{Name: "SQLite (modernc.org/sqlite)", Open: open})
}

// open opens path with the connection settings the sandbox's SQL store
// relies on. locking_mode EXCLUSIVE: once written, the file stays locked
// until the store closes, so a second sandbox on it fails at once instead
// of sharing it. synchronous FULL with WAL: a commit is on disk (WAL
// fsynced) before the answer is written, so power loss cannot take an
// acknowledged change either. busy_timeout 0: a held file is refused now,
// not after a wait. _txlock=immediate: a section's transaction takes the
// write lock when it begins.
func open(path string) (*sql.DB, error) {
	dsn := "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path) +
		"?_pragma=busy_timeout(0)&_pragma=locking_mode(EXCLUSIVE)&_pragma=synchronous(FULL)&_txlock=immediate"
	return sql.Open("sqlite", dsn)
}
