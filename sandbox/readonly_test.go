package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A database on a read-only volume (a container's :ro mount) is refused as
// read-only, saying what to do, not as damaged. The volume is a read-only
// bind mount made in a user namespace, so the test needs no privilege; it
// is skipped where unshare or user namespaces are missing.
func TestDBRefusesReadOnlyAsReadOnly(t *testing.T) {
	if dir := os.Getenv("PAYKIT_SANDBOX_RO_DIR"); dir != "" {
		// The child, inside the read-only mount: report what Open says.
		_, err := Open(Config{DBPath: filepath.Join(dir, "sandbox.db")})
		fmt.Printf("OPEN-ERROR: %v\n", err)
		return
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare to make a read-only mount")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sandbox.db")
	sb, err := Open(Config{DBPath: path})
	if err != nil {
		t.Fatal(err)
	}
	sb.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(unshare, "-rm", "sh", "-c",
		`mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 77; exec "$2" -test.run='^TestDBRefusesReadOnlyAsReadOnly$' -test.count=1`,
		"sh", dir, os.Args[0])
	cmd.Env = append(os.Environ(), "PAYKIT_SANDBOX_RO_DIR="+dir, "PAYKIT_SANDBOX_TEST_DB=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 77 || strings.Contains(string(out), "unshare failed") {
		t.Skipf("no read-only mount here: %s", out)
	}
	line := ""
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "OPEN-ERROR: ") {
			line = l
		}
	}
	if !strings.Contains(line, "is read-only") || !strings.Contains(line, "make it writable, or give -db another file") ||
		strings.Contains(line, "damaged") {
		t.Fatalf("a read-only database: %q (child: %v)\n%s", line, err, out)
	}
	after, err := os.ReadFile(path)
	if err != nil || string(after) != string(before) {
		t.Fatal("the read-only file was changed")
	}
}
