package retention_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of this repository starts with.
const module = "github.com/retentionkit/retention"

// layer is one place in the import direction. A package may import a package
// of a lower rank, or one inside its own layer, and nothing else of the module:
// rank is what makes the arrows of docs/architecture.md point one way.
type layer struct {
	prefix string // module-relative directory; it covers every package below it
	rank   int
}

// layers states `core <- gates <- passes <- supervisor <- actors <- node/* <- node
// <- cmd/node`, with the order inside node/. Peers of one rank (buildinfo,
// config, health) do not import each other. A package of the module that is in
// no layer and not in outsideLayers fails the test, so a new package gets a
// place in this table before it gets imports.
var layers = []layer{
	{"core", 0},
	{"gates", 1},
	{"passes", 2}, // passes/driver/<db>, passes/ledger, passtest and dbtest too
	{"supervisor", 3},
	{"actors", 4}, // with actors/actortest
	{"node/buildinfo", 5},
	{"node/config", 5},
	{"node/health", 5},
	{"node/live", 6},
	{"node/metrics", 6},
	{"node/admin", 7},
	{"node/cluster", 8},
	{"node/ui", 8},
	{"node", 9}, // the importable node; exact match only, see layerOf
	{"cmd/node", 10},
}

// outsideLayers are the trees that use the runtime from outside: benchmarks,
// suites that drive binaries, examples. They may import anything, and no
// layered package may import them.
var outsideLayers = []string{"bench", "chaos", "deploy", "examples", "multinode"}

// stdOnly are the layers whose rules must read and test without a database or
// an actor system: besides the module's lower layers they import only the
// standard library.
var stdOnly = []string{"core", "gates"}

// restricted names the outside imports that only some layers may use, so a
// database or the actor system does not leak into layers that should not know
// it.
var restricted = []struct {
	what     string
	prefixes []string // import paths, each covering the paths below it
	allowed  []string // layer prefixes that may import them
}{
	{
		what:     "protoactor",
		prefixes: []string{"github.com/asynkron/protoactor-go"},
		allowed:  []string{"supervisor", "actors", "node/cluster", "node"},
	},
	{
		what: "SQL (bun, database/sql, drivers)",
		prefixes: []string{
			"github.com/uptrace/bun", "database/sql",
			"github.com/jackc/pgx", "github.com/lib/pq", "github.com/mattn/go-sqlite3",
			"modernc.org/sqlite", "github.com/go-sql-driver/mysql",
		},
		// cmd/node opens the database while the wiring still lives there;
		// drop it once the node library opens it.
		allowed: []string{"passes", "node", "cmd/node"},
	},
}

// under reports whether path is prefix or below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// layerOf finds the layer of a module-relative package directory, the longest
// prefix winning. "node" matches only the node package itself, so a
// subpackage missing from the table is reported instead of taking node's rank.
func layerOf(rel string) (layer, bool) {
	best, found := layer{}, false
	for _, l := range layers {
		ok := under(rel, l.prefix)
		if l.prefix == "node" {
			ok = rel == "node"
		}
		if ok && len(l.prefix) > len(best.prefix) {
			best, found = l, true
		}
	}
	return best, found
}

// isStd reports whether an import path is in the standard library: its first
// element has no dot.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// checkImports returns one line per import of the package at module-relative
// directory rel that goes against the layer rules.
func checkImports(rel string, imports []string) []string {
	if slices.ContainsFunc(outsideLayers, func(p string) bool { return under(rel, p) }) {
		return nil
	}
	from, ok := layerOf(rel)
	if !ok {
		return []string{rel + ": package is in no layer; add it to layers in layers_test.go"}
	}
	var bad []string
	for _, imp := range imports {
		if why := checkImport(from, imp); why != "" {
			bad = append(bad, rel+" imports "+imp+": "+why)
		}
	}
	return bad
}

// checkImport returns why one import of a package in layer from breaks a rule,
// or "" when it is allowed.
func checkImport(from layer, imp string) string {
	if under(imp, module) {
		return checkInternal(from, strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
	}
	for _, r := range restricted {
		if slices.ContainsFunc(r.prefixes, func(p string) bool { return under(imp, p) }) &&
			!slices.Contains(r.allowed, from.prefix) {
			return "only " + strings.Join(r.allowed, ", ") + " may import " + r.what
		}
	}
	if slices.Contains(stdOnly, from.prefix) && !isStd(imp) {
		return from.prefix + " imports only the standard library"
	}
	return ""
}

// checkInternal returns why an import of the module's package to (relative)
// from layer from runs against the direction, or "".
func checkInternal(from layer, to string) string {
	if slices.ContainsFunc(outsideLayers, func(p string) bool { return under(to, p) }) {
		return "no layer imports " + to
	}
	target, ok := layerOf(to)
	switch {
	case !ok:
		return to + " is in no layer"
	case target.prefix == from.prefix:
		return ""
	case target.rank >= from.rank:
		return "arrow against the direction: " + from.prefix + " (rank " + strconv.Itoa(from.rank) +
			") may not import " + target.prefix + " (rank " + strconv.Itoa(target.rank) + ")"
	}
	return ""
}

// repoImports parses every non-test Go file of the repository, whatever its
// build tags (so node/cluster's tagged files count), and returns the imports of
// each package directory, relative to the repository root.
func repoImports(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			pkgs[dir] = append(pkgs[dir], imp)
		}
		if _, seen := pkgs[dir]; !seen {
			pkgs[dir] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the repository: %v", err)
	}
	return pkgs
}

// TestLayers fails on any import of the repository's non-test code that goes
// against docs/architecture.md, so the layers are checked by CI rather than by
// reading.
func TestLayers(t *testing.T) {
	t.Parallel()
	pkgs := repoImports(t)
	if _, err := os.Stat("go.mod"); err != nil || len(pkgs) < 10 {
		t.Fatalf("found %d packages; the test must run from the repository root", len(pkgs))
	}
	dirs := make([]string, 0, len(pkgs))
	for dir := range pkgs {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if dir == "." {
			continue // the module root holds only this test
		}
		for _, bad := range checkImports(dir, pkgs[dir]) {
			t.Error(bad)
		}
	}
}

// TestLayersCatchWrongArrows feeds the check imports that break each kind of
// rule, and legal ones, so TestLayers cannot pass by checking nothing.
func TestLayersCatchWrongArrows(t *testing.T) {
	t.Parallel()
	wrong := []struct{ pkg, imp string }{
		{"core", module + "/actors"},                   // upward
		{"core/clock", module + "/gates"},              // core below gates
		{"gates", "github.com/uptrace/bun"},            // SQL outside passes
		{"gates", "golang.org/x/sync/errgroup"},        // not standard library
		{"passes", module + "/supervisor"},             // upward
		{"passes/driver/postgres", module + "/actors"}, // a driver is in passes
		{"supervisor", module + "/actors"},             // upward
		{"actors", module + "/node/health"},            // upward
		{"node/health", module + "/node/config"},       // peers of one rank
		{"node/metrics", module + "/node/admin"},       // upward inside node/
		{"node/admin", "github.com/asynkron/protoactor-go/actor"},
		{"node/config", "github.com/uptrace/bun"},
		{"node/ui", module + "/node"},         // the library sits above its parts
		{"node", module + "/cmd/node"},        // nothing imports the binary
		{"actors", module + "/examples/demo"}, // outside the layers
		{"node/newpkg", "fmt"},                // a package in no layer
	}
	for _, w := range wrong {
		if bad := checkImports(w.pkg, []string{w.imp}); len(bad) == 0 {
			t.Errorf("%s importing %s passed the check", w.pkg, w.imp)
		}
	}
	right := []struct{ pkg, imp string }{
		{"core/retry", "time"},
		{"core/clock", module + "/core"},
		{"gates", module + "/core"},
		{"passes/driver/sqlite", "github.com/uptrace/bun"},
		{"passes/ledger", module + "/core/clock"},
		{"supervisor", module + "/passes"},
		{"actors/actortest", module + "/actors"},
		{"node/cluster", "github.com/asynkron/protoactor-go/cluster"},
		{"node", module + "/node/cluster"},
		{"node", "github.com/uptrace/bun"},
		{"cmd/node", module + "/node"},
		{"examples/embedded", module + "/cmd/node"},
	}
	for _, r := range right {
		if bad := checkImports(r.pkg, []string{r.imp}); len(bad) != 0 {
			t.Errorf("a legal import was rejected: %v", bad)
		}
	}
}
