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
