package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/sandbox"
)

// readmeBlock returns the first fenced block of language lang in
// docs/other-languages.md whose text contains marker.
func readmeBlock(t *testing.T, lang, marker string) string {
	t.Helper()
	section := otherLanguagesDoc(t)
	for rest := section; ; {
		start := strings.Index(rest, "```"+lang+"\n")
		if start < 0 {
			t.Fatalf("no ```%s block containing %q in the section", lang, marker)
		}
		rest = rest[start+len("```"+lang+"\n"):]
		end := strings.Index(rest, "```")
		if end < 0 {
			t.Fatalf("unterminated ```%s block", lang)
		}
		if block := rest[:end]; strings.Contains(block, marker) {
			return block
		}
		rest = rest[end+3:]
	}
}

// TestReadmePythonDecimalRecipe runs the exact-decimal recipe for Python of
// docs/other-languages.md as it stands: parsing keeps 1500.50's digits and writing sends
// them as a bare JSON number. It needs python3 (CI has it for
// examples/python); without it the test skips.
func TestReadmePythonDecimalRecipe(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	block := readmeBlock(t, "python", "parse_float=Decimal")
	out, err := exec.Command(py, "-c", block).CombinedOutput()
	if err != nil {
		t.Fatalf("the Python recipe of docs/other-languages.md fails: %v\n%s", err, out)
	}
	const want = `1500.50 {"ext_id":"order-1001","amount":1500.50}`
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("the Python recipe of docs/other-languages.md prints %q, want %q", got, want)
	}
	if !strings.Contains(block, "# "+want) {
		t.Fatalf("the recipe's closing comment does not show what it prints (%s)", want)
	}
}

// TestReadmeRefusedSignatureLine sends the first signing vector of
// docs/other-languages.md with a wrong signature to the sandbox and expects
// the 401 message the document shows, word for word.
func TestReadmeRefusedSignatureLine(t *testing.T) {
	want := strings.TrimSpace(readmeBlock(t, "text", "invalid signature:"))
	v := readmeVectors(t)[0]
	sb := sandbox.New(sandbox.Config{})
	t.Cleanup(sb.Close)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(v.Method, srv.URL+v.URI, strings.NewReader(v.Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Identity", v.Key)
	req.Header.Set("X-Signature", strings.Repeat("0", 64))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Error, Message string }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusUnauthorized || body.Error != "AUTH_001" || body.Message != want {
		t.Fatalf("HTTP %d %s %q\ndocs/other-languages.md shows %q", res.StatusCode, body.Error, body.Message, want)
	}
}
