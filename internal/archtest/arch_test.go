package archtest

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// maxPublicNames bounds the exported names of pkg/reprieve: package-level
// identifiers and methods together.
const maxPublicNames = 60

// publicPackage is the one package under pkg/.
const publicPackage = "pkg/reprieve"

// moduleRoot returns the directory of go.mod and the module's path.
func moduleRoot(t *testing.T) (dir, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for line := range strings.Lines(string(data)) {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(rest), `"`)
				}
			}
			t.Fatalf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestOnePublicPackage: pkg/ holds pkg/reprieve and no other package.
func TestOnePublicPackage(t *testing.T) {
	root, _ := moduleRoot(t)
	var packages []string
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != filepath.Join(root, "pkg") && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(packages, rel) {
				packages = append(packages, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(packages, []string{publicPackage}) {
		t.Errorf("the packages under pkg/ are %q, want only %s: the rest of the code goes under internal/", packages, publicPackage)
	}
}

// parsedFile is a Go file of a package and the names of its imports that
// are internal packages.
type parsedFile struct {
	name     string
	file     *ast.File
	internal map[string]string // import name -> path
}

// parseDir parses the Go files of dir (test files too when tests).
func parseDir(t *testing.T, fset *token.FileSet, dir string, tests bool) []parsedFile {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []parsedFile
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || !tests && strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		pf := parsedFile{name: name, file: f, internal: map[string]string{}}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !isInternal(path) {
				continue
			}
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			pf.internal[local] = path
		}
		out = append(out, pf)
	}
	return out
}

// isInternal reports whether an import path is of an internal package.
func isInternal(path string) bool {
	return strings.HasPrefix(path, "internal/") || strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

// TestPublicNames: pkg/reprieve exports at most maxPublicNames names.
func TestPublicNames(t *testing.T) {
	root, _ := moduleRoot(t)
	fset := token.NewFileSet()
	var names []string
	for _, pf := range parseDir(t, fset, filepath.Join(root, publicPackage), false) {
		for _, decl := range pf.file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil && len(d.Recv.List) > 0 {
					names = append(names, receiverName(d.Recv.List[0].Type)+"."+d.Name.Name)
				} else {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	t.Logf("%d exported names: %s", len(names), strings.Join(names, ", "))
	if len(names) > maxPublicNames {
		t.Errorf("%s exports %d names, more than %d: keep the public face small", publicPackage, len(names), maxPublicNames)
	}
}

// receiverName returns the type name of a method's receiver.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// internalRefs returns the internal packages e names (as "pkg.Name").
func internalRefs(e ast.Node, internal map[string]string) []string {
	var refs []string
	if e == nil {
		return nil
	}
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				if path, ok := internal[x.Name]; ok {
					refs = append(refs, path+"."+sel.Sel.Name)
				}
			}
		}
		return true
	})
	return refs
}

// TestNoInternalInPublicAPI: nothing under pkg/ declares an alias of an
// internal type, and no exported declaration of it (signatures, exported
// fields, types, the values of exported variables) names one.
func TestNoInternalInPublicAPI(t *testing.T) {
	root, _ := moduleRoot(t)
	fset := token.NewFileSet()
	var dirs []string
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		for _, pf := range parseDir(t, fset, dir, true) {
			at := func(n ast.Node) string { return fset.Position(n.Pos()).String() }
			// Aliases, anywhere, tests included.
			ast.Inspect(pf.file, func(n ast.Node) bool {
				if s, ok := n.(*ast.TypeSpec); ok && s.Assign.IsValid() {
					if refs := internalRefs(s.Type, pf.internal); len(refs) > 0 {
						t.Errorf("%s: type %s is an alias of %s: give the public package types of its own", at(s), s.Name.Name, strings.Join(refs, ", "))
					}
				}
				return true
			})
			if strings.HasSuffix(pf.name, "_test.go") {
				continue
			}
			for _, decl := range pf.file.Decls {
				for _, n := range exportedParts(decl) {
					if refs := internalRefs(n, pf.internal); len(refs) > 0 {
						t.Errorf("%s: an exported declaration names %s", at(n), strings.Join(refs, ", "))
					}
				}
			}
		}
	}
}

// exportedParts returns the parts of decl that its exported names show:
// the signature of an exported function or method, the exported fields
// and methods of an exported type (or the whole of a type that is not a
// struct), the types and values of exported variables and constants.
func exportedParts(decl ast.Decl) []ast.Node {
	var out []ast.Node
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Name.IsExported() && (d.Recv == nil || len(d.Recv.List) == 0 || ast.IsExported(receiverName(d.Recv.List[0].Type))) {
			out = append(out, d.Type)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if !s.Name.IsExported() {
					continue
				}
				st, ok := s.Type.(*ast.StructType)
				if !ok {
					out = append(out, s.Type)
					continue
				}
				for _, f := range st.Fields.List {
					exported := len(f.Names) == 0 && ast.IsExported(receiverName(f.Type)) // embedded
					for _, n := range f.Names {
						exported = exported || n.IsExported()
					}
					if exported {
						out = append(out, f.Type)
					}
				}
			case *ast.ValueSpec:
				if !slices.ContainsFunc(s.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
					continue
				}
				if s.Type != nil {
					out = append(out, s.Type)
				}
				for _, v := range s.Values {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// goList returns the import paths `go list -deps` prints for patterns,
// run at the module's root.
func goList(t *testing.T, root string, args ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list imports: %v", err)
	}
	cmd := exec.Command(goBin, append([]string{"list", "-e", "-deps", "-f", "{{.ImportPath}}"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var paths []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		paths = append(paths, sc.Text())
	}
	if len(paths) == 0 {
		t.Fatalf("go list %s listed nothing", strings.Join(args, " "))
	}
	return paths
}

// within reports whether the import path p is the package dir of the
// module or one under it; dir "" is the whole module.
func within(p, module, dir string) bool {
	base := module
	if dir != "" {
		base += "/" + dir
	}
	return p == base || strings.HasPrefix(p, base+"/")
}

// TestEngineIsPure: the engine (internal/engine/...) imports no package
// of the module outside it: no adapter, driver, command line or public
// package. Its tests may use the shared fixtures (internal/reprievetest).
func TestEngineIsPure(t *testing.T) {
	root, module := moduleRoot(t)
	check := func(args []string, allowed ...string) {
		for _, p := range goList(t, root, args...) {
			// A test binary's packages are listed as "p [p.test]" and "p.test".
			p, _, _ = strings.Cut(p, " ")
			p = strings.TrimSuffix(p, ".test")
			if !within(p, module, "") || within(p, module, "internal/engine") || slices.ContainsFunc(allowed, func(a string) bool { return within(p, module, a) }) {
				continue
			}
			t.Errorf("go list %s: the engine depends on %s", strings.Join(args, " "), p)
		}
	}
	check([]string{"./internal/engine/..."})
	check([]string{"-test", "./internal/engine/..."}, "internal/reprievetest")
}

// TestAdaptersDoNotImportCLI: no adapter (internal/adapter/...), nor its
// tests, depends on the command line (internal/cli/...).
func TestAdaptersDoNotImportCLI(t *testing.T) {
	root, module := moduleRoot(t)
	for _, p := range goList(t, root, "-test", "./internal/adapter/...") {
		p, _, _ = strings.Cut(p, " ")
		if within(p, module, "internal/cli") {
			t.Errorf("the adapters depend on %s", p)
		}
	}
}

// TestRemovedPackages: process-level tricks are gone for good.
func TestRemovedPackages(t *testing.T) {
	root, _ := moduleRoot(t)
	for _, dir := range []string{"internal/hugeheap", "internal/runtimestat"} {
		if _, err := os.Stat(filepath.Join(root, dir)); err == nil {
			t.Errorf("%s exists: it was removed (huge pages and runtime statistics do not belong in a CLI)", dir)
		} else if !os.IsNotExist(err) {
			t.Errorf("%s: %v", dir, err)
		}
	}
}
