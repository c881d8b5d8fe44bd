package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// pkg is one public package's exported surface.
type pkg struct {
	Dir   string   // the folder, relative to the root, with slashes
	Names []string // sorted; a method as Type.Method
}

// skipped are the folder names whose packages no user imports.
var skipped = []string{"internal", "testdata", "examples", "bench", "mocks", "scripts"}

// count walks the module at root and returns its public packages that
// export anything, sorted by folder.
func count(root string) ([]pkg, error) {
	names := map[string]map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == root {
				return nil
			}
			n := d.Name()
			if strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || slices.Contains(skipped, n) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module counts apart
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse: %w", err)
		}
		if f.Name.Name == "main" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if names[rel] == nil {
			names[rel] = map[string]bool{}
		}
		for _, n := range exported(f) {
			names[rel][n] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []pkg
	for dir, set := range names {
		if len(set) == 0 {
			continue
		}
		p := pkg{Dir: dir}
		for n := range set {
			p.Names = append(p.Names, n)
		}
		slices.Sort(p.Names)
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b pkg) int { return strings.Compare(a.Dir, b.Dir) })
	return out, nil
}

// exported returns the exported names one file declares: top-level names,
// and methods (as Type.Method) of exported types.
func exported(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				out = append(out, d.Name.Name)
				continue
			}
			if recv := receiver(d.Recv.List[0].Type); ast.IsExported(recv) {
				out = append(out, recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						out = append(out, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// receiver returns the type name of a method's receiver: T, *T, T[K] and
// T[K, V] all give T.
func receiver(t ast.Expr) string {
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
