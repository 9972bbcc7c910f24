package paykit_test

// The README's first call and the package documentation's opening example
// are code this file runs: TestFrontDoorSnippetsRun checks that their lines
// are lines of firstCall, and Example_firstCall runs it against the sandbox.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/paykit-dev/paykit-go"
	"github.com/paykit-dev/paykit-go/sandbox"
)

// firstCall is the README's first call and doc.go's opening example, line
// for line.
func firstCall(ctx context.Context, baseURL, apiKey, secret string) error {
	c, err := paykit.NewClient(baseURL, apiKey, paykit.HMACSigner(secret))
	if err != nil {
		return err
	}
	p, err := c.CreatePayment(ctx, paykit.CreatePaymentParams{
		ExtID:  "order-1001",                         // your order id: what makes a retry safe
		Amount: decimal.RequireFromString("1500.50"), // RUB, never float64
	})
	if errors.Is(err, paykit.ErrUnknownOutcome) {
		// The answer was lost: the payment may exist. Read it back by ext_id
		// (c.GetPaymentByExtID) before creating it again.
		return err
	}
	if err != nil {
		return err
	}
	// Send the payer to p.PaymentURL, or show p.Requisites, before p.ValidUntil.
	fmt.Println(p.ExtID, p.Status, p.Amount.StringFixed(2), p.Currency) // order-1001 PENDING 1500.50 RUB
	return nil
}

// Example_firstCall is the README's first call against the sandbox.
func Example_firstCall() {
	sb := sandbox.New(sandbox.Config{})
	defer sb.Close()
	srv := httptest.NewServer(sb)
	defer srv.Close()
	if err := firstCall(context.Background(), srv.URL, sandbox.DefaultAPIKey, sandbox.DefaultSecret); err != nil {
		fmt.Println(err)
	}
	// Output: order-1001 PENDING 1500.50 RUB
}

// frontDoorMaxLines keeps README.md a front door: manuals belong in the
// files it links (sandbox/README.md, cmd/paykit/README.md, docs/).
const frontDoorMaxLines = 360

// frontDoorFirstCallLine is how far down README.md its first NewClient may
// be: on the first screen.
const frontDoorFirstCallLine = 40

// TestFrontDoorSnippetsRun holds the README's first ```go block and the
// first code block of doc.go to the lines of firstCall (indentation
// aside), so both show code that Example_firstCall runs; and keeps the
// README short, with its first call on the first screen.
func TestFrontDoorSnippetsRun(t *testing.T) {
	self, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	// firstCall's lines only: the rest of this file (this test included)
	// holds lines a snippet could match without being code that runs.
	_, body, _ := strings.Cut(string(self), "\nfunc firstCall(")
	body, _, found := strings.Cut(body, "\n}\n")
	if !found {
		t.Fatal("readme_test.go: firstCall not found")
	}
	mine := map[string]bool{}
	for _, l := range strings.Split(body, "\n")[1:] { // its signature aside
		mine[strings.TrimSpace(l)] = true
	}
	check := func(name string, block []string) {
		t.Helper()
		if len(block) < 10 {
			t.Fatalf("%s: first code block has %d lines; has the example moved?", name, len(block))
		}
		for _, l := range block {
			if l = strings.TrimSpace(l); l != "" && !mine[l] {
				t.Errorf("%s line not in firstCall: %s", name, l)
			}
		}
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(readme), "\n"), "\n")
	if len(lines) > frontDoorMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move a manual out to the file the README links", len(lines), frontDoorMaxLines)
	}
	var block []string
	in, newClient := false, 0
	for i, l := range lines {
		if newClient == 0 && strings.Contains(l, "paykit.NewClient(") {
			newClient = i + 1
		}
		switch {
		case !in && block == nil && l == "```go":
			in = true
		case in && l == "```":
			in = false
		case in:
			block = append(block, l)
		}
	}
	check("README.md", block)
	if newClient == 0 || newClient > frontDoorFirstCallLine {
		t.Errorf("README.md's first paykit.NewClient is on line %d, want it within the first %d lines", newClient, frontDoorFirstCallLine)
	}

	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	block = nil
	for _, l := range strings.Split(string(doc), "\n") {
		if code, ok := strings.CutPrefix(l, "//\t"); ok {
			block = append(block, code)
		} else if block != nil && l != "//" {
			break // the end of the first code block
		}
	}
	check("doc.go", block)
}

// TestDocsLinksResolve follows every relative link of the repository's
// Markdown files (code blocks aside): the file must exist and, for a
// #fragment into a Markdown file, a heading of that file must have it as
// its GitHub anchor. Manuals move between files; their links must move
// with them.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading := regexp.MustCompile(`(?m)^#+ (.*)$`)
	anchors := func(md string) map[string]bool {
		out := map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(md, ""), -1) {
			var b strings.Builder
			for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
				switch {
				case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
					b.WriteRune(r)
				case r == ' ':
					b.WriteByte('-')
				}
			}
			out[b.String()] = true
		}
		return out
	}
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := path
			if file != "" {
				dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links %s, which does not exist", path, target)
				continue
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			md, err := os.ReadFile(dest)
			if err != nil {
				return err
			}
			if !anchors(string(md))[frag] {
				t.Errorf("%s links %s: %s has no heading with that anchor", path, target, dest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 8 {
		t.Fatalf("%d Markdown files found", files)
	}
}
