package sandbox

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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

// TestNoRegularTestFileImportsSQLite keeps SQLite out of a merchant's
// module cache. A merchant's `go mod tidy` loads the tests of every package
// its code imports (sandboxtest imports sandbox and the layers below), and
// downloads the modules those tests import: one test file importing
// sandbox/sqlite costs every merchant ~400 MB of modernc.org modules. A
// module zip holds regular files only, so the one test file that needs the
// driver, sandbox/sqlite_test.go, is a symbolic link (to
// testdata/sqlite_test.go): in every clone, in no merchant's download. Every
// other test file of those packages must not import the driver.
func TestNoRegularTestFileImportsSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/paykit-dev/paykit-go"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if eq .Module.Path \""+mod+"\"}}{{.Dir}}{{\"\\t\"}}{{join .TestGoFiles \",\"}},{{join .XTestGoFiles \",\"}}{{end}}{{end}}",
		mod+"/sandbox/sandboxtest", mod).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	links := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, files, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		for _, name := range strings.Split(files, ",") {
			if name == "" {
				continue
			}
			path := filepath.Join(dir, name)
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				links++
				continue // not in the module zip
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				if p == mod+"/sandbox/sqlite" || strings.HasPrefix(p, "modernc.org/") {
					t.Errorf("%s imports %s: every merchant whose tests use sandboxtest would download SQLite (make it a link, as sandbox/sqlite_test.go is)", path, p)
				}
			}
		}
	}
	fi, err := os.Lstat("sqlite_test.go")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("sandbox/sqlite_test.go is not a symbolic link (err %v): merchants' go mod tidy would download SQLite", err)
	}
	if links == 0 {
		t.Error("go list found no linked test file: the check did not see sandbox/sqlite_test.go")
	}
}
