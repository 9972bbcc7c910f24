// This file is sandbox/sqlite_test.go: that path is a symbolic link to it.
// Module zips hold regular files only, so the link (and with it the
// import of the SQLite driver) is in every clone and never in the module a
// merchant downloads: the test binary of package sandbox gets the driver
// here, while a merchant's `go mod tidy`, which loads the tests of the
// packages it imports (sandboxtest imports sandbox), never sees it and
// downloads no modernc.org module (.ci/install-check.sh checks it;
// TestNoRegularTestFileImportsSQLite keeps every other test file from
// importing it). A clone on Windows needs git's core.symlinks.
package sandbox

import (
	"os"
	"path/filepath"

	_ "github.com/paykit-dev/paykit-go/sandbox/sqlite" // the suite's DBPath tests, and PAYKIT_SANDBOX_TEST_DB=file
)

// With PAYKIT_SANDBOX_TEST_DB=file every Server of this test binary that
// has no Config.DBPath gets a temporary file of its own, so the whole suite
// runs once more on SQLite (CI does). The setting is read here, by the
// tests, never by the package.
func init() {
	if os.Getenv("PAYKIT_SANDBOX_TEST_DB") != "file" {
		return
	}
	testDBPath = func() (string, func()) {
		dir, err := os.MkdirTemp("", "paykit-sandbox-test-")
		if err != nil {
			panic(err)
		}
		return filepath.Join(dir, "sandbox.db"), func() { os.RemoveAll(dir) }
	}
}
