package paykit_test

// doc.go's "What the spec does not say" names a test for each point;
// this checks that every named test exists.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnsaidSectionNamesRealTests keeps doc.go's "What the spec does not
// say" honest: one paragraph per "not shown" point of the spec (19), each
// naming at least one test, and every test it names exists.
func TestUnsaidSectionNamesRealTests(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		if l == "//" || strings.HasPrefix(l, "// ") {
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "//"), " "))
		}
	}
	doc := strings.Join(lines, "\n")
	_, section, ok := strings.Cut(doc, "# What the spec does not say\n")
	require.True(t, ok, "doc.go has the section")
	section, _, _ = strings.Cut(section, "\n# ")                   // up to the next heading, if any
	paras := strings.Split(strings.TrimSpace(section), "\n\n")[1:] // the first one introduces
	assert.Len(t, paras, 19, "one paragraph per point")

	tests := map[string]bool{}
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err, f)
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				tests[fn.Name.Name] = true
			}
		}
	}
	named := regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9]*`)
	for _, p := range paras {
		refs := named.FindAllString(p, -1)
		if assert.NotEmpty(t, refs, "paragraph names no test: %.60q", p) {
			for _, name := range refs {
				assert.True(t, tests[name], "doc.go names %s, which does not exist", name)
			}
		}
	}
}
