package passes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSweepLockTakenInOnePlace: the sweep lock is applied one way. Only pinSweep takes it
// (the driver's TrySessionLock) and only pinnedSweep.release gives it back (the driver's
// ReleaseSessionLock, which heldSlot.Close also calls for a delete slot: the class
// each passes is checked below); pinSweep is reached
// only from a Table's sweep connection and from ExclusiveWith, and both of the ways a
// lock is asked for (WithSweepLock, ExclusiveWith) refuse a driver without session locks
// through sweepLockSupported. A new path that takes the lock itself, or reaches pinSweep
// without the check, fails here.
func TestSweepLockTakenInOnePlace(t *testing.T) {
	uses := callersIn(t, ".")
	want := map[string][]string{
		"TrySessionLock":     {"pinSweep"},
		"ReleaseSessionLock": {"heldSlot.Close", "pinnedSweep.release"},
		"pinSweep":           {"ExclusiveWith", "tableSweep.conn"},
		"sweepLockSupported": {"ExclusiveWith", "Table.WithSweepLock"},
	}
	for name, callers := range want {
		if got := uses[name]; !slices.Equal(got, callers) {
			t.Errorf("%s is called from %v; want only %v (the sweep lock is applied one way: see pinSweep)", name, got, callers)
		}
	}
	// The lock's class names the sweep lock in SQL: outside pinSweep and release only
	// LockHolders, which reads who holds it, may use it.
	if got, want := uses["SweepLockClass"], []string{"LockHolders", "pinSweep", "pinnedSweep.release"}; !slices.Equal(got, want) {
		t.Errorf("SweepLockClass is used in %v; want only %v", got, want)
	}
}

// callersIn maps each called or referenced name (a function, a method by its selector,
// an identifier) to the sorted functions of the package's non-test files that use it.
func callersIn(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			where := funcName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				var used string
				switch n := n.(type) {
				case *ast.SelectorExpr:
					used = n.Sel.Name
				case *ast.Ident:
					used = n.Name
				}
				if used != "" {
					if sets[used] == nil {
						sets[used] = map[string]bool{}
					}
					sets[used][where] = true
				}
				return true
			})
		}
	}
	out := map[string][]string{}
	for name, set := range sets {
		out[name] = slices.Sorted(maps.Keys(set))
	}
	return out
}

// funcName is "Recv.Name" for a method, "Name" for a function.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
