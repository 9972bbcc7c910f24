package paykit_test

// docs/layout.md's table "What each room may import" is the rule book of the
// repository's imports; this file reads it and every package's imports, so
// the page and the code cannot drift apart.

import (
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the root module's path; the layout table writes it
// "paykit-go".
const modulePath = "github.com/paykit-dev/paykit-go"

// layoutRule is one row of docs/layout.md's import table.
type layoutRule struct {
	row      string   // the row as written, to name it in failures
	packages []string // patterns of the packages the row governs
	except   []string // patterns left out of packages
	allow    []string // what they may import directly; nil means anything
	deny     []string // what they must not import directly
	denyDeep []string // what they must not reach through this repository's packages
	onceDir  string   // the rule waits for this directory; "" means always
}

// layoutGraph maps each package of the repository to its direct imports
// (non-test files).
type layoutGraph map[string][]string

// expandLayoutPath turns the table's shorthand into an import path.
func expandLayoutPath(p string) string {
	if p == "paykit-go" || strings.HasPrefix(p, "paykit-go/") {
		return modulePath + strings.TrimPrefix(p, "paykit-go")
	}
	return p
}

// layoutMatch reports whether import path p matches pattern: "std" (a
// standard library path: no dot in its first element), "*", "x/..." (x and
// below) or an exact path.
func layoutMatch(pattern, p string) bool {
	switch {
	case pattern == "*":
		return true
	case pattern == "std":
		first, _, _ := strings.Cut(p, "/")
		return !strings.Contains(first, ".")
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

func layoutMatchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return layoutMatch(pat, p) })
}

// layoutCell splits a table cell into its items: backquotes dropped, comma
// separated, empty items ignored.
func layoutCell(cell string) []string {
	var out []string
	for _, item := range strings.Split(strings.ReplaceAll(cell, "`", ""), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, expandLayoutPath(item))
		}
	}
	return out
}

// parseLayoutTable reads the import table of docs/layout.md: the first
// Markdown table after the heading "## What each room may import".
func parseLayoutTable(t *testing.T, md string) []layoutRule {
	t.Helper()
	_, section, ok := strings.Cut(md, "\n## What each room may import\n")
	if !ok {
		t.Fatal(`docs/layout.md has no "## What each room may import" section`)
	}
	var rows []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		} else if len(rows) > 0 {
			break
		}
	}
	if len(rows) < 3 {
		t.Fatalf("docs/layout.md: the import table has %d lines", len(rows))
	}
	header := strings.Join(strings.Fields(rows[0]), " ")
	if header != "| package | may import | must not import | must not depend on | in force |" {
		t.Fatalf("docs/layout.md: the import table's header is %q", rows[0])
	}
	var rules []layoutRule
	for _, row := range rows[2:] {
		cells := strings.Split(strings.Trim(row, "|"), "|")
		if len(cells) != 5 {
			t.Fatalf("docs/layout.md: %d cells in %q, want 5", len(cells), row)
		}
		r := layoutRule{row: strings.TrimSpace(row)}
		pkgs, except, _ := strings.Cut(cells[0], " except ")
		r.packages, r.except = layoutCell(pkgs), layoutCell(except)
		if len(r.packages) == 0 {
			t.Fatalf("docs/layout.md: no package in %q", row)
		}
		r.allow = layoutCell(cells[1])
		switch {
		case len(r.allow) == 0:
			t.Fatalf("docs/layout.md: empty \"may import\" in %q (write * for anything)", row)
		case slices.Contains(r.allow, "*"):
			r.allow = nil
		}
		r.deny, r.denyDeep = layoutCell(cells[2]), layoutCell(cells[3])
		switch force := strings.TrimSpace(cells[4]); {
		case force == "always":
		case strings.HasPrefix(force, "once ") && strings.HasSuffix(force, " exists"):
			r.onceDir = strings.Trim(strings.TrimSuffix(strings.TrimPrefix(force, "once "), " exists"), "` ")
		default:
			t.Fatalf("docs/layout.md: \"in force\" is %q in %q, want always or once `dir` exists", force, row)
		}
		rules = append(rules, r)
	}
	return rules
}

// governs reports whether the rule applies to package p.
func (r layoutRule) governs(p string) bool {
	return layoutMatchAny(r.packages, p) && !layoutMatchAny(r.except, p)
}

// violations lists every import of the governed packages of g that the
// rule forbids, and whether any package is governed at all.
func (r layoutRule) violations(g layoutGraph) (out []string, governed bool) {
	for _, p := range slices.Sorted(mapKeys(g)) {
		if !r.governs(p) {
			continue
		}
		governed = true
		for _, imp := range g[p] {
			if r.allow != nil && !layoutMatchAny(r.allow, imp) {
				out = append(out, p+" imports "+imp+", which its row does not allow")
			}
			if layoutMatchAny(r.deny, imp) {
				out = append(out, p+" imports "+imp+", which its row forbids")
			}
		}
		if len(r.denyDeep) == 0 {
			continue
		}
		// Through the repository's own packages, breadth first, keeping
		// the first path found to each.
		via := map[string]string{p: ""}
		queue := []string{p}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, imp := range g[cur] {
				if _, seen := via[imp]; seen {
					continue
				}
				via[imp] = cur
				if layoutMatchAny(r.denyDeep, imp) {
					chain := []string{imp}
					for at := cur; at != ""; at = via[at] {
						chain = append([]string{at}, chain...)
					}
					out = append(out, p+" depends on "+imp+", which its row forbids: "+strings.Join(chain, " -> "))
				}
				if _, ok := g[imp]; ok {
					queue = append(queue, imp)
				}
			}
		}
	}
	return out, governed
}

func mapKeys(g layoutGraph) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range g {
			if !yield(k) {
				return
			}
		}
	}
}

// loadLayoutGraph parses the non-test Go files of every module of the
// repository (each go.mod gives its directory's import path) and returns
// each package's direct imports; a directory with test files only is a
// package without imports. Files excluded from every build (//go:build
// ignore) are skipped; other constraints are ignored, so every platform's
// imports count.
func loadLayoutGraph(t *testing.T) layoutGraph {
	t.Helper()
	modules := map[string]string{} // directory -> module path
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		switch {
		case d.IsDir() && path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			name == "testdata" || name == "node_modules" || name == "vendor"):
			return filepath.SkipDir
		case name == "go.mod":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(string(b), "\n") {
				if mod, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
					modules[filepath.Dir(path)] = strings.Trim(strings.TrimSpace(mod), `"`)
				}
			}
		case !d.IsDir() && strings.HasSuffix(name, ".go"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g := layoutGraph{}
	fset := token.NewFileSet()
files:
	for _, path := range files {
		pkg := importPathOf(modules, filepath.Dir(path))
		if _, ok := g[pkg]; !ok {
			g[pkg] = nil
		}
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, cg := range f.Comments {
			if cg.Pos() > f.Package {
				break
			}
			for _, c := range cg.List {
				if expr, err := constraint.Parse(c.Text); err == nil && !expr.Eval(func(tag string) bool { return tag != "ignore" }) {
					continue files
				}
			}
		}
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(g[pkg], p) {
				g[pkg] = append(g[pkg], p)
			}
		}
	}
	return g
}

// importPathOf is the import path of directory dir: the path of the
// nearest module at or above it, and dir below that module's directory.
func importPathOf(modules map[string]string, dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if mod, ok := modules[d]; ok {
			rel, _ := filepath.Rel(d, dir)
			if rel == "." {
				return mod
			}
			return mod + "/" + filepath.ToSlash(rel)
		}
		if d == "." || d == string(filepath.Separator) {
			return filepath.ToSlash(dir)
		}
	}
}

func readLayoutRules(t *testing.T) []layoutRule {
	t.Helper()
	md, err := os.ReadFile("docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	return parseLayoutTable(t, string(md))
}

// TestLayoutImports holds every package of the repository to the rows of
// docs/layout.md's import table that govern it, and every package to
// being governed by a row of its own (the catch-all paykit-go/... aside).
// A row that waits for a directory is skipped until that directory exists.
func TestLayoutImports(t *testing.T) {
	t.Parallel()
	rules := readLayoutRules(t)
	g := loadLayoutGraph(t)
	if len(g[modulePath]) == 0 || len(g[modulePath+"/sandbox"]) == 0 || len(g[modulePath+"/cmd/paykit"]) == 0 {
		t.Fatalf("the repository's packages were not found (%d packages)", len(g))
	}
	for _, p := range slices.Sorted(mapKeys(g)) {
		if !slices.ContainsFunc(rules, func(r layoutRule) bool { return r.governs(p) && !slices.Contains(r.packages, modulePath+"/...") }) {
			t.Errorf("no row of docs/layout.md's import table governs %s: add its room to the table", p)
		}
	}
	for _, r := range rules {
		t.Run(r.packages[0], func(t *testing.T) {
			if r.onceDir != "" {
				if _, err := os.Stat(filepath.FromSlash(r.onceDir)); err != nil {
					t.Skipf("in force once %s exists: %s", r.onceDir, r.row)
				}
			}
			bad, governed := r.violations(g)
			if !governed {
				t.Fatalf("the row governs no package; is its path right? %s", r.row)
			}
			for _, v := range bad {
				t.Errorf("%s\n\trow: %s", v, r.row)
			}
		})
	}
}

// TestLayoutRulesBite shows that each row can fail: for every row, a
// made-up package it governs that imports something outside its "may
// import" list, something its "must not import" names, and (through a
// package of the repository) something its "must not depend on" names,
// is reported once for each.
func TestLayoutRulesBite(t *testing.T) {
	t.Parallel()
	concrete := func(pattern string) string {
		if base, ok := strings.CutSuffix(pattern, "/..."); ok {
			return base + "/fake"
		}
		return pattern
	}
	for _, r := range readLayoutRules(t) {
		pkg := concrete(r.packages[0])
		g := layoutGraph{pkg: {"example.com/not/allowed"}}
		want := len(r.deny) + len(r.denyDeep)
		for _, d := range r.deny {
			g[pkg] = append(g[pkg], concrete(d))
		}
		for i, d := range r.denyDeep {
			hop := modulePath + "/hop/" + strconv.Itoa(i)
			g[pkg] = append(g[pkg], hop)
			g[hop] = []string{concrete(d)}
		}
		// Each direct import outside a strict "may import" list is one more.
		for _, imp := range g[pkg] {
			if r.allow != nil && !layoutMatchAny(r.allow, imp) {
				want++
			}
		}
		bad, governed := r.violations(g)
		if !governed || len(bad) != want {
			t.Errorf("row %s\n\ton a package that breaks it: %d violations %q, want %d", r.row, len(bad), bad, want)
		}
	}
}
