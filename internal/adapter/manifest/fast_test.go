package manifest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestGeneralPathStandsAlone: the general path's files name nothing
// declared in the fast path's files (fast_*.go) — no function, type,
// variable or constant, and no method that only those declare — but
// through the seam, fast.go.
func TestGeneralPathStandsAlone(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	type file struct {
		name string
		f    *ast.File
	}
	var general, fast []file
	var seam *ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case name == "fast.go":
			seam = f
		case strings.HasPrefix(name, "fast_"):
			fast = append(fast, file{name, f})
		default:
			general = append(general, file{name, f})
		}
	}
	// The names the fast files declare, and the method and field names the
	// general files and the seam declare (a selector of one of those may
	// be theirs).
	declared := map[string]string{}
	fastMethods := map[string]string{}
	generalMembers := map[string]bool{}
	for _, f := range fast {
		for _, d := range f.f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					declared[d.Name.Name] = f.name
				} else {
					fastMethods[d.Name.Name] = f.name
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						declared[s.Name.Name] = f.name
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declared[n.Name] = f.name
						}
					}
				}
			}
		}
	}
	for _, f := range append(general, file{"fast.go", seam}) {
		ast.Inspect(f.f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Recv != nil {
					generalMembers[n.Name.Name] = true
				}
			case *ast.Field:
				for _, name := range n.Names {
					generalMembers[name.Name] = true
				}
			}
			return true
		})
	}
	var bad []string
	for _, f := range general {
		selectors := map[*ast.Ident]bool{}
		ast.Inspect(f.f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				selectors[n.Sel] = true
				if where, ok := fastMethods[n.Sel.Name]; ok && !generalMembers[n.Sel.Name] {
					bad = append(bad, fset.Position(n.Pos()).String()+": ."+n.Sel.Name+" (declared in "+where+")")
				}
			case *ast.Ident:
				if where, ok := declared[n.Name]; ok && !selectors[n] && n.Obj == nil {
					bad = append(bad, fset.Position(n.Pos()).String()+": "+n.Name+" (declared in "+where+")")
				}
			}
			return true
		})
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("the general path names the fast path's %s", b)
	}
	if len(fast) == 0 || len(general) == 0 || seam == nil {
		t.Fatalf("%d fast files, %d general files, seam %v", len(fast), len(general), seam != nil)
	}
}
