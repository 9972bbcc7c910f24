package spec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every code openapi.yaml names is the table's or one the sandbox adds
// (documented there as sandbox behaviour), and every code of the table is
// in openapi.yaml: the two cannot drift apart.
func TestErrorCodesMatchOpenAPI(t *testing.T) {
	doc, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sandboxOnly := []string{"AUTH_001"}
	inDoc := map[string]bool{}
	for _, c := range regexp.MustCompile(`\b[A-Z]{3}_[0-9]{3}\b`).FindAllString(string(doc), -1) {
		inDoc[c] = true
		if !IsCode(c) && !slices.Contains(sandboxOnly, c) {
			t.Errorf("openapi.yaml names %s, which is not in ErrorCodes", c)
		}
	}
	for _, c := range ErrorCodes {
		if !inDoc[c.Code] {
			t.Errorf("%s is in ErrorCodes but not in openapi.yaml", c.Code)
		}
		if c.HTTPStatus < 400 || c.HTTPStatus > 599 || c.Meaning == "" || len(c.RaisedBy) == 0 {
			t.Errorf("incomplete row %+v", c)
		}
	}
}

func TestIsCode(t *testing.T) {
	for _, c := range ErrorCodes {
		if !IsCode(c.Code) {
			t.Errorf("IsCode(%q) = false", c.Code)
		}
	}
	for _, c := range []string{"", "pay_001", "PAY_009", "AUTH_001", "INVALID_CODE", "PAY_0010"} {
		if IsCode(c) {
			t.Errorf("IsCode(%q) = true", c)
		}
	}
}

// Every code of ErrorCodes has its named constant, and every Code*
// constant is a code of the table or of SandboxCodes: a code answered
// through a constant is then one a client can know.
func TestCodeConstantsAreTheTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "spec.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Code") {
					continue
				}
				v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				named[v] = true
				if !IsCode(v) && !slices.Contains(SandboxCodes, v) {
					t.Errorf("%s = %q is neither in ErrorCodes nor in SandboxCodes", n.Name, v)
				}
			}
		}
	}
	for _, c := range append(slices.Clone(SandboxCodes), func() (cs []string) {
		for _, c := range ErrorCodes {
			cs = append(cs, c.Code)
		}
		return cs
	}()...) {
		if !named[c] {
			t.Errorf("%s has no Code constant", c)
		}
	}
}
