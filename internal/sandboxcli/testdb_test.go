package sandboxcli

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With PAYKIT_SANDBOX_TEST_DB=file every in-process run without -db keeps
// its state in a temporary file of its own, so this package's tests run
// once more on SQLite (CI does). The setting is read here, by the tests,
// never by the package.
func init() {
	if os.Getenv("PAYKIT_SANDBOX_TEST_DB") != "file" {
		return
	}
	testDBPath = func() (string, func()) {
		dir, err := os.MkdirTemp("", "paykit-sandboxcli-test-")
		if err != nil {
			panic(err)
		}
		return filepath.Join(dir, "sandbox.db"), func() { os.RemoveAll(dir) }
	}
}

// The switch really moves a run without -db onto a file (and removes it
// after), while the banner still says the state is in memory.
func TestTestDBPathPutsARunOnAFile(t *testing.T) {
	saved := testDBPath
	t.Cleanup(func() { testDBPath = saved })
	path := filepath.Join(t.TempDir(), "run.db")
	removed := make(chan struct{})
	testDBPath = func() (string, func()) { return path, func() { os.Remove(path); close(removed) } }

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, io.Discard)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	out := bufio.NewScanner(pr)
	var banner strings.Builder
	for out.Scan() {
		banner.WriteString(out.Text() + "\n")
		if strings.Contains(out.Text(), "controls:") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the run's database file: %v", err)
	}
	if !strings.Contains(banner.String(), "database:  none, state in memory") {
		t.Errorf("banner of a run without -db does not say in memory:\n%s", banner.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	<-removed
}
