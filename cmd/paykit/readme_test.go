package main

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// TestReadmeSession replays the session of this directory's README.md
// ("A session") with the built binary against a fresh sandbox with the
// default credentials (the "sandbox" profile's), and compares what each
// command prints with what the README shows, times, ids, random card digits
// and measures aside: the README shows what the tool does.
func TestReadmeSession(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, "\n## A session\n")
	if i < 0 {
		t.Fatal(`cmd/paykit/README.md has no "## A session" section`)
	}
	section := readme[i:]
	start := strings.Index(section, "\n```\n$ ")
	if start < 0 {
		t.Fatal("no session block in the A session section")
	}
	block := section[start+len("\n```\n"):]
	block = block[:strings.Index(block, "```\n")]

	// Commands and the output the README shows after each.
	type step struct{ cmd, want string }
	var steps []step
	for _, line := range strings.SplitAfter(block, "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, step{cmd: strings.TrimSuffix(cmd, "\n")})
			continue
		}
		steps[len(steps)-1].want += line
	}
	if len(steps) < 6 {
		t.Fatalf("only %d commands in the README session", len(steps))
	}

	sb := sandbox.New(sandbox.Config{})
	t.Cleanup(sb.Close)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	normal := func(s string) string {
		s = strings.ReplaceAll(s, "\r\n", "\n") // csv's CRLF, which the README's text cannot show
		s = strings.ReplaceAll(s, srv.URL, "http://127.0.0.1:8080")
		s = uuidRE.ReplaceAllString(s, "<uuid>")
		s = readmeTimeRE.ReplaceAllString(s, "<time>")
		s = latencyRE.ReplaceAllString(s, "median of 3: <d> (fastest <d>)")
		s = skewRE.ReplaceAllString(s, "skew <s> ")
		s = maskedRE.ReplaceAllString(s, "${1}NNNN")
		return s
	}
	for _, st := range steps {
		if !strings.HasPrefix(st.cmd, "paykit ") {
			t.Fatalf("README session line %q does not run paykit", st.cmd)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", "{ "+st.cmd+"; } 2>&1")
		cmd.Env = []string{"PATH=" + filepath.Dir(binary) + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TZ=UTC",
			"PAYKIT_CONFIG=/nonexistent/x", "PAYKIT_BASE_URL=" + srv.URL}
		out, err := cmd.Output()
		cancel()
		if err != nil && !strings.Contains(st.want, "paykit: ") {
			t.Errorf("%s: %v\n%s", st.cmd, err, out)
		}
		if got, want := normal(string(out)), normal(st.want); got != want {
			t.Errorf("README session: %s\n--- the binary prints\n%s--- the README shows\n%s", st.cmd, got, want)
		}
	}
}

// readmeTimeRE is a time as the table and csv print it.
var readmeTimeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
