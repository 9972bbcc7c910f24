package sandbox

import (
	"os"
	"strings"
	"testing"
)

// Every curl line that reaches the sandbox in the README and in this
// package's documentation carries the JSON Content-Type the controls
// require: a line without it would answer 415 to whoever copies it.
func TestCurlLinesCarryJSONHeader(t *testing.T) {
	for _, file := range []string{"../README.md", "doc.go"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "curl ") || !strings.Contains(line, "/sandbox/") {
				continue
			}
			n++
			if !strings.Contains(line, "-H 'Content-Type: application/json'") {
				t.Errorf("%s: curl line without the JSON header: %s", file, line)
			}
		}
		if n == 0 {
			t.Errorf("%s: no curl line found; has the section moved?", file)
		}
	}
}
