package sandbox

import (
	"os/exec"
	"strings"
	"testing"
)

// A merchant's tests import sandbox and sandboxtest, never SQLite: only
// sandbox/sqlite imports the driver, so their build stays small and
// CGO-free. Checked on the real import graph, by go list.
func TestSQLiteOnlyThroughSandboxSQLite(t *testing.T) {
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
	// The check can see the driver where it is.
	if !hasSQLite(deps(mod + "sandbox/sqlite")) {
		t.Error("sandbox/sqlite does not import modernc.org/sqlite")
	}
}
