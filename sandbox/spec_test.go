package sandbox

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/paykit-dev/paykit-go/internal/spec"
	"github.com/paykit-dev/paykit-go/sandbox/internal/ledger"
)

// Every error code the sandbox's code answers (package sandbox and its
// internal layers) is named through internal/spec, whose constants are
// the spec's table and the sandbox's documented codes
// (spec.TestCodeConstantsAreTheTable): a code written as a string
// literal, where a typo or an invented code could reach a client, fails
// here.
func TestCodesAreTheSpecs(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	more, _ := filepath.Glob("internal/*/*.go")
	files = append(files, more...)
	code := regexp.MustCompile(`\b[A-Z]{2,4}_[0-9]{3}\b`)
	named := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0) // comments left out
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING && code.MatchString(n.Value) {
					t.Errorf("%s writes the code %s as a literal; use internal/spec's constant", f, code.FindString(n.Value))
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "spec" && strings.HasPrefix(n.Sel.Name, "Code") {
					named++
				}
			}
			return true
		})
	}
	if named < 50 {
		t.Fatalf("found only %d uses of spec's codes: is the test reading the sources?", named)
	}
}

// The cross-border countries the sandbox serves are the spec's, each with
// its currency and phone numbering.
func TestCountriesAreTheSpecs(t *testing.T) {
	var got []string
	for c := range ledger.Countries {
		got = append(got, c)
	}
	want := slices.Clone(spec.Countries)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("countries %v, the spec's %v", got, want)
	}
}
