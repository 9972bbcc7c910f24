package sandbox

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readyz is GET /readyz's status.
func (e *env) readyz() int {
	e.t.Helper()
	res, err := http.Get(e.ts.URL + ReadyzPath)
	must(e.t, err)
	res.Body.Close()
	return res.StatusCode
}

// A -db that is a symbolic link to an existing database opens it (SQLite
// resolves the link and keeps its -wal beside the target, so the store
// syncs that one), writes through it, and what it wrote is in the target
// after a restart on the target's own name. A link to a link, and a
// directory reached through a link, resolve alike.
func TestDBSymlinkToAnExistingDatabase(t *testing.T) {
	for _, how := range []string{"link", "link to a link", "linked directory"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			real := filepath.Join(dir, "data", "sandbox.db")
			must(t, os.Mkdir(filepath.Dir(real), 0o700))
			e := dbEnv(t, real, &clock{t: base}, Config{})
			first := e.createPayment(`{"ext_id":"before","amount":100}`).str("id")
			e.stop()

			link := filepath.Join(dir, "sandbox.db")
			switch how {
			case "link":
				must(t, os.Symlink(real, link))
			case "link to a link":
				must(t, os.Symlink(real, filepath.Join(dir, "middle.db")))
				must(t, os.Symlink("middle.db", link)) // relative, as ln -s writes it
			case "linked directory":
				must(t, os.Symlink("data", filepath.Join(dir, "current")))
				link = filepath.Join(dir, "current", "sandbox.db")
			}
			e2 := dbEnv(t, link, &clock{t: base}, Config{})
			eq(t, e2.readyz(), 200)
			eq(t, e2.do("GET", "/v1/payments/"+first, "").str("ext_id"), "before")
			second := e2.createPayment(`{"ext_id":"through the link","amount":101}`).str("id")
			if _, err := os.Lstat(filepath.Join(dir, "sandbox.db-wal")); err == nil {
				t.Errorf("a -wal file beside the link's name: SQLite keeps it beside the target")
			}
			e2.stop()

			e3 := dbEnv(t, real, &clock{t: base}, Config{})
			eq(t, e3.do("GET", "/v1/payments/"+second, "").str("ext_id"), "through the link")
		})
	}
}

// A link that names no file is refused with a message that says so: the
// sandbox does not create a database at whatever a dangling link points
// to.
func TestDBDanglingSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "sandbox.db")
	must(t, os.Symlink(filepath.Join(dir, "gone", "sandbox.db"), link))
	_, err := Open(Config{DBPath: link})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Open on a dangling link: %v", err)
	}
}

// crashImage copies the database file at path, and its -wal file if one
// is there, into a new directory, as a SIGKILL would leave them (what the
// kernel holds for the files' names), and returns the copy's path.
func crashImage(t *testing.T, path string) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), filepath.Base(path))
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if suffix != "" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		must(t, err)
		must(t, os.WriteFile(img+suffix, b, 0o600))
	}
	return img
}

// The -wal file removed (or replaced) under a running sandbox, as the
// database file's removal is: /readyz answers 503 at once, and the next
// change is refused with 503 SANDBOX_STORE. The payment acknowledged
// before the removal lived only in the removed file: it is copied into the
// database when the removal is seen, so a kill after it (the files as the
// names reach them) loses nothing acknowledged.
func TestDBWALRemovedUnderARunningSandbox(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "sandbox.db")
			e := dbEnv(t, path, &clock{t: base}, Config{})
			id := e.createPayment(`{"ext_id":"acknowledged","amount":100}`).str("id")
			eq(t, e.readyz(), 200)

			switch how {
			case "removed":
				must(t, os.Remove(path+"-wal"))
			case "replaced":
				must(t, os.WriteFile(filepath.Join(dir, "other"), nil, 0o600))
				must(t, os.Rename(filepath.Join(dir, "other"), path+"-wal"))
			}
			eq(t, e.readyz(), 503)
			killed := crashImage(t, path)
			wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"refused","amount":200}`), 503, "SANDBOX_STORE")
			eq(t, e.readyz(), 503)

			e2 := dbEnv(t, killed, &clock{t: base}, Config{})
			eq(t, e2.do("GET", "/v1/payments/"+id, "").str("ext_id"), "acknowledged")
			wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/refused", ""), 404, "PAY_006")
		})
	}
}

// A change is what sees the removal when no probe comes first: the -wal
// file removed on a sandbox nobody probes, the next create is refused
// (not acknowledged into the removed file), and what came before survives
// a kill.
func TestDBWALRemovedSeenByTheNextChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	e := dbEnv(t, path, &clock{t: base}, Config{})
	id := e.createPayment(`{"ext_id":"acknowledged","amount":100}`).str("id")
	must(t, os.Remove(path+"-wal"))
	wantStatus(t, e.do("POST", "/v1/payments", `{"ext_id":"refused","amount":200}`), 503, "SANDBOX_STORE")
	killed := crashImage(t, path)
	eq(t, e.readyz(), 503)
	e2 := dbEnv(t, killed, &clock{t: base}, Config{})
	eq(t, e2.do("GET", "/v1/payments/"+id, "").str("ext_id"), "acknowledged")
	wantStatus(t, e2.do("GET", "/v1/payments/by-ext-id/refused", ""), 404, "PAY_006")
}
