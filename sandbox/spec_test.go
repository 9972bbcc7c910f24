package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/internal/spec"
)

// Every error code the sandbox's code answers (package sandbox and its
// internal layers) is one of the spec's, so a typo or an invented code
// cannot reach a client; the sandbox's own codes are SANDBOX_*.
func TestCodesAreTheSpecs(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	more, _ := filepath.Glob("internal/*/*.go")
	files = append(files, more...)
	code := regexp.MustCompile(`"([A-Z]{2,4}_[0-9]{3})"`)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range code.FindAllStringSubmatch(string(src), -1) {
			seen++
			if !spec.IsCode(m[1]) && m[1] != "AUTH_001" {
				t.Errorf("%s answers %s, which is not a code of the spec", f, m[1])
			}
		}
	}
	if seen < 50 {
		t.Fatalf("found only %d code literals: is the test reading the sources?", seen)
	}
}

// The cross-border countries the sandbox serves are the spec's, each with
// its currency and phone numbering.
func TestCountriesAreTheSpecs(t *testing.T) {
	var got []string
	for c := range countries {
		got = append(got, c)
	}
	want := slices.Clone(spec.Countries)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("countries %v, the spec's %v", got, want)
	}
}
