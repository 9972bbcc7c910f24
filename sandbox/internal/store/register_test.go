package store_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox"
	"github.com/paykit-dev/paykit-go/sandbox/internal/store"
)

// This test binary has no driver registered (it imports neither
// sandbox/sqlite nor a program that does): a DBPath is refused with the
// import that is missing, and no file is created.
func TestOpenWithoutDriverNamesTheImport(t *testing.T) {
	if _, ok := store.Registered(); ok {
		t.Fatal("a driver is registered in a binary that imports none")
	}
	path := filepath.Join(t.TempDir(), "x.db")
	sb, err := sandbox.Open(sandbox.Config{DBPath: path})
	if err == nil {
		sb.Close()
		t.Fatal("Open with a DBPath and no driver succeeded")
	}
	const imp = `import _ "github.com/paykit-dev/paykit-go/sandbox/sqlite"`
	if !strings.Contains(err.Error(), imp) {
		t.Fatalf("error %q does not name %s", err, imp)
	}
	if m, _ := filepath.Glob(path + "*"); len(m) != 0 {
		t.Fatalf("files created without a driver: %v", m)
	}
	// New panics with the same error, as it does on any refused DBPath.
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), imp) {
			t.Fatalf("New with a DBPath and no driver: panic %v", r)
		}
	}()
	sandbox.New(sandbox.Config{DBPath: path})
}

func TestRegisterTwicePanics(t *testing.T) {
	// Registered here, once: the test above runs first (file order) and
	// this binary has no other test that needs "no driver".
	open := func(string) (*sql.DB, error) { return nil, errors.New("not a driver") }
	store.Register(store.Driver{Name: "first", Open: open})
	for name, d := range map[string]store.Driver{"twice": {Name: "second", Open: open}, "no Open": {Name: "x"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register %s: no panic", name)
				}
			}()
			store.Register(d)
		}()
	}
	if d, ok := store.Registered(); !ok || d.Name != "first" {
		t.Fatalf("Registered() = %q, %v; want the first driver kept", d.Name, ok)
	}
}
