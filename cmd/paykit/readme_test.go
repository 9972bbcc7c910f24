package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

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
	// The README's commands name --profile sandbox, which wins over the
	// PAYKIT_* variables: a [sandbox] profile points it at this sandbox.
	config := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(config, []byte("[sandbox]\nbase_url = "+srv.URL+"\napi_key = "+sandbox.DefaultAPIKey+
		"\nsecret = "+sandbox.DefaultSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if !strings.HasPrefix(st.cmd, "paykit ") {
			t.Fatalf("README session line %q does not run paykit", st.cmd)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", "{ "+st.cmd+"; } 2>&1")
		cmd.Env = []string{"PATH=" + filepath.Dir(binary) + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TZ=UTC",
			"PAYKIT_CONFIG=" + config}
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

// TestReadmeReference holds the Reference of this directory's README.md to
// the code: every command of the CLI's tree (groups, cobra's help and
// completion included) is named in the "Commands" list, every command named
// there exists, and the "Exit codes" table lists exactly the exit* constants
// of the package, as do the package comment's table and --help's. A command
// or an exit code added to the code without its documentation fails here.
func TestReadmeReference(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)

	// The commands of the tree, by path without "paykit ".
	root := newRoot(&app{env: &env{getenv: os.Getenv, isTerminal: isTerminal}})
	tree := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if c.HasParent() {
			tree[strings.TrimPrefix(c.CommandPath(), "paykit ")] = true
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(tree) < 40 {
		t.Fatalf("only %d commands in the tree: %v", len(tree), tree)
	}

	named, err := readmeCommands(readmeSection(t, readme, "### Commands"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, words := range named {
		// Each word goes down the tree while the command has commands
		// of its own; below a command that has none (wait, api, help)
		// the words are its arguments (wait payment).
		c := root
		for _, w := range words {
			if !c.HasSubCommands() {
				break
			}
			var sub *cobra.Command
			for _, s := range c.Commands() {
				if s.Name() == w && !s.Hidden {
					sub = s
				}
			}
			if sub == nil {
				t.Errorf("README.md's command list names %q: %q has no command %q", strings.Join(words, " "), c.CommandPath(), w)
				break
			}
			c = sub
			// A command named covers its groups: "sandbox webhooks
			// list" names "sandbox webhooks" and "sandbox".
			covered[strings.TrimPrefix(c.CommandPath(), "paykit ")] = true
		}
	}
	for p := range tree {
		if !covered[p] {
			t.Errorf("paykit %s is not in README.md's command list (### Commands)", p)
		}
	}

	// The exit codes: the constants, README's table, the package
	// comment's table and --help's.
	consts := exitConstants(t)
	if len(consts) < 9 {
		t.Fatalf("only %d exit* constants found: %v", len(consts), consts)
	}
	row := regexp.MustCompile(`(?m)^\| ([0-9]+) \| (.+) \|$`)
	inReadme := map[int]bool{}
	for _, m := range row.FindAllStringSubmatch(readmeSection(t, readme, "### Exit codes"), -1) {
		n, _ := strconv.Atoi(m[1])
		if inReadme[n] {
			t.Errorf("README.md's exit-code table has %d twice", n)
		}
		inReadme[n] = true
	}
	sameCodes(t, "README.md's exit-code table", inReadme, consts)

	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := f.Doc.Text()
	i := strings.Index(doc, "# Exit codes\n")
	if i < 0 {
		t.Fatal(`the package comment has no "# Exit codes" section`)
	}
	doc = doc[i+len("# Exit codes\n"):]
	if j := strings.Index(doc, "\n# "); j >= 0 {
		doc = doc[:j]
	}
	inDoc := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\t([0-9]+) `).FindAllStringSubmatch(doc, -1) {
		n, _ := strconv.Atoi(m[1])
		inDoc[n] = true
	}
	sameCodes(t, "the package comment's exit-code table", inDoc, consts)

	inHelp := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)(?:^  |; )([0-9]+):? `).FindAllStringSubmatch(exitCodesHelp, -1) {
		n, _ := strconv.Atoi(m[1])
		inHelp[n] = true
	}
	sameCodes(t, "--help's exit codes (exitCodesHelp)", inHelp, consts)
}

// readmeSection is the text under heading (a line of its own) up to the
// next heading of any level.
func readmeSection(t *testing.T, md, heading string) string {
	t.Helper()
	i := strings.Index(md, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no %q section", heading)
	}
	s := md[i+len(heading)+2:]
	if j := strings.Index(s, "\n#"); j >= 0 {
		s = s[:j]
	}
	return s
}

// readmeCommands reads the command list: each bullet opens with the code
// spans of the commands it is about, such as "- `terminals`, `balance`:"
// or "- `wait payment|payout|withdrawal ID`:". In a span, the leading
// lower-case words are the command's path and arguments, a|b|c standing
// for each alternative; what follows (ID, METHOD, --flags, [options]) is
// left out. It returns the words of each alternative.
func readmeCommands(section string) ([][]string, error) {
	span := regexp.MustCompile("^`([^`]+)`(?:,? and |, | )?")
	word := regexp.MustCompile(`^[a-z][a-z-]*(\|[a-z][a-z-]*)*$`)
	var out [][]string
	bullets := 0
	for _, line := range strings.Split(section, "\n") {
		rest, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		bullets++
		n := 0
		for m := span.FindStringSubmatch(rest); m != nil; m = span.FindStringSubmatch(rest) {
			rest = rest[len(m[0]):]
			n++
			paths := []string{""}
			for _, w := range strings.Fields(m[1]) {
				if !word.MatchString(w) {
					break
				}
				var next []string
				for _, p := range paths {
					for _, alt := range strings.Split(w, "|") {
						next = append(next, strings.TrimSpace(p+" "+alt))
					}
				}
				paths = next
			}
			if paths[0] == "" {
				return nil, fmt.Errorf("README.md's command list: %q names no command", m[1])
			}
			for _, p := range paths {
				out = append(out, strings.Fields(p))
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("README.md's command list: the bullet %q does not open with a command in backquotes", line)
		}
	}
	if bullets < 10 {
		return nil, fmt.Errorf("README.md's command list has %d bullets", bullets)
	}
	return out, nil
}

// exitConstants are the package's exit codes: its integer constants
// named exit*, read from the source so that a new one is seen.
func exitConstants(t *testing.T) map[int]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "exit") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.INT {
						continue
					}
					n, err := strconv.Atoi(lit.Value)
					if err != nil {
						t.Fatalf("%s: %s = %s", name, id.Name, lit.Value)
					}
					out[n] = true
				}
			}
		}
	}
	return out
}

// sameCodes reports the codes that one list has and the constants lack,
// or the other way round.
func sameCodes(t *testing.T, what string, got, consts map[int]bool) {
	t.Helper()
	for n := range consts {
		if !got[n] {
			t.Errorf("%s lacks exit code %d", what, n)
		}
	}
	for n := range got {
		if !consts[n] {
			t.Errorf("%s has exit code %d, which no exit* constant is", what, n)
		}
	}
}

// TestLayoutDocVerb holds the verb shown in docs/layout.md's "How to add a
// CLI command" to the code: each line of its Go block is a line of
// payments.go (indentation aside), so the pattern it teaches is the one
// the commands follow.
func TestLayoutDocVerb(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("payments.go")
	if err != nil {
		t.Fatal(err)
	}
	code := map[string]bool{}
	for _, l := range strings.Split(string(src), "\n") {
		code[strings.TrimSpace(l)] = true
	}
	section := readmeSection(t, string(doc), "## How to add a CLI command")
	_, block, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal(`docs/layout.md's "How to add a CLI command" has no Go block`)
	}
	block, _, _ = strings.Cut(block, "```")
	lines := 0
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "// cmd/paykit/payments.go") {
			continue
		}
		lines++
		if !code[l] {
			t.Errorf("docs/layout.md's verb has a line payments.go lacks: %s", l)
		}
	}
	if lines < 20 {
		t.Fatalf("docs/layout.md's verb has %d lines", lines)
	}
}
