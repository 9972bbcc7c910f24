package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The SQL store's file: its layout (the migrations), the checks of a
// file at open, and the -wal file the group commit syncs.

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
