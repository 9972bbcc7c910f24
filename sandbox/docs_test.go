package sandbox

import (
	"os"
	"strings"
	"testing"
)

// Every curl line that reaches the sandbox in the documentation carries
// the JSON Content-Type the controls require: a line without it would
// answer 415 to whoever copies it. The sandbox's manual, the other-languages
// page and this package's documentation each show some; the top-level
// README may show none, but any it shows is held to the same rule.
func TestCurlLinesCarryJSONHeader(t *testing.T) {
	for _, doc := range []struct {
		file     string
		optional bool
	}{{"README.md", false}, {"../docs/other-languages.md", false}, {"doc.go", false}, {"../README.md", true}} {
		b, err := os.ReadFile(doc.file)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		// A command continued with a backslash is one line.
		text := strings.ReplaceAll(string(b), "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			if !strings.Contains(line, "curl ") || !strings.Contains(line, "/sandbox/") {
				continue
			}
			n++
			if !strings.Contains(line, "-H 'Content-Type: application/json'") {
				t.Errorf("%s: curl line without the JSON header: %s", doc.file, line)
			}
		}
		if n == 0 && !doc.optional {
			t.Errorf("%s: no curl line found; has the section moved?", doc.file)
		}
	}
}

// testValueDocLines renders TestValues the way the package documentation
// carries them, one list item a row.
func testValueDocLines() []string {
	var out []string
	for _, v := range TestValues {
		out = append(out, "//   - "+v.Resource+" "+v.Field+", "+v.Value+" (e.g. "+v.Example+"): "+v.Outcome+".")
	}
	return out
}

// The test values table has one source, TestValues: the package
// documentation and the sandbox's README.md must carry exactly its rows, in
// its order.
func TestTestValuesDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(testValueDocLines(), "\n")
	if !strings.Contains(string(doc), want) {
		t.Errorf("doc.go does not carry the test values; the block should read:\n%s", want)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), TestValuesMarkdown()) {
		t.Errorf("sandbox/README.md does not carry the test values; the table should read:\n%s", TestValuesMarkdown())
	}
}
