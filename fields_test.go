package paykit_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEveryExportedNameIsDocumented fails on any exported type, function,
// method, struct field or interface method of the root package and of
// sandbox that has no doc comment, naming each. A merchant reads the SDK
// through godoc: an undocumented field is a question the SDK leaves them.
//
// A field counts as documented by a comment above it or at the end of its
// line (godoc shows both); a declaration in a parenthesised group needs its
// own comment, or the group's when the group holds that one name only.
func TestEveryExportedNameIsDocumented(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{".", "sandbox"} {
		missing, err := undocumented(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range missing {
			t.Errorf("%s: no doc comment", m)
		}
		if len(missing) > 0 {
			t.Logf("%s: %d undocumented exported names", dir, len(missing))
		}
	}
}

// undocumented parses the non-test Go files of dir and lists, as
// "file:line: name", every exported name without a doc comment.
func undocumented(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var missing []string
	report := func(pos token.Pos, name string) {
		p := fset.Position(pos)
		missing = append(missing, fmt.Sprintf("%s:%d: %s", p.Filename, p.Line, name))
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil {
					recv := receiverType(d.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue // not in godoc
					}
					name = recv + "." + name
				}
				if d.Doc == nil {
					report(d.Pos(), "func "+name)
				}
			case *ast.GenDecl:
				if d.Tok != token.TYPE {
					continue
				}
				for _, spec := range d.Specs {
					ts := spec.(*ast.TypeSpec)
					if !ts.Name.IsExported() {
						continue
					}
					if ts.Doc == nil && (d.Doc == nil || len(d.Specs) > 1) {
						report(ts.Pos(), "type "+ts.Name.Name)
					}
					checkMembers(ts.Name.Name, ts.Type, report)
				}
			}
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// checkMembers reports the exported fields of a struct type and the methods
// of an interface type that have no comment.
func checkMembers(typeName string, typ ast.Expr, report func(token.Pos, string)) {
	var list *ast.FieldList
	kind := "field"
	switch tt := typ.(type) {
	case *ast.StructType:
		list = tt.Fields
	case *ast.InterfaceType:
		list, kind = tt.Methods, "method"
	default:
		return
	}
	for _, field := range list.List {
		if len(field.Names) == 0 {
			continue // an embedded type is documented where it is declared
		}
		exported := false
		for _, n := range field.Names {
			exported = exported || n.IsExported()
		}
		if exported && field.Doc == nil && field.Comment == nil {
			report(field.Pos(), kind+" "+typeName+"."+field.Names[0].Name)
		}
	}
}

// receiverType is the name of a method's receiver type, without pointer or
// type parameters.
func receiverType(expr ast.Expr) string {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}
