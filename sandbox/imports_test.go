package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// The import arrows, checked on the real import graph by go list: a
// merchant's tests import sandbox and sandboxtest, never SQLite (only
// sandbox/sqlite imports the driver, so their build stays small and
// CGO-free), and nothing under sandbox/internal reaches back up to the
// public package.
func TestImportArrows(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/paykit-dev/paykit-go/"
	deps := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list", "-deps"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	hasSQLite := func(pkgs []string) bool {
		for _, p := range pkgs {
			if strings.HasPrefix(p, "modernc.org/sqlite") {
				return true
			}
		}
		return false
	}
	if hasSQLite(deps(mod+"sandbox", mod+"sandbox/sandboxtest")) {
		t.Error("sandbox or sandboxtest imports modernc.org/sqlite")
	}
	if hasSQLite(deps("-test", mod+"sandbox/sandboxtest")) {
		t.Error("sandboxtest's tests import modernc.org/sqlite")
	}
	// Nothing under sandbox/internal imports the public package: the
	// rooms below it never reach back up.
	out, err := exec.Command("go", "list", mod+"sandbox/internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, d := range deps(p) {
			if d == mod+"sandbox" {
				t.Errorf("%s imports %s", p, d)
			}
		}
	}
	// The check can see the driver where it is.
	if !hasSQLite(deps(mod + "sandbox/sqlite")) {
		t.Error("sandbox/sqlite does not import modernc.org/sqlite")
	}
}
