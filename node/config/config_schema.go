package config

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	configType      = reflect.TypeFor[Config]()
	durationType    = reflect.TypeFor[Duration]()
	columnsType     = reflect.TypeFor[Columns]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

// location names a place in the configuration the way a user reads it: a section path
// (node.shutdown_grace), or a pass by name and a field inside it.
type location struct {
	path     string // passes[0].children[1].table
	passPath string // passes[0] while inside a pass
	pass     string // that pass's name, when it has one
}

// field is the location of key inside l.
func (l location) field(key string) location {
	if l.path != "" {
		key = l.path + "." + key
	}
	l.path = key
	return l
}

// item is the location of the i-th entry n of the list at l.
func (l location) item(i int, n *yaml.Node) location {
	out := l
	out.path = fmt.Sprintf("%s[%d]", l.path, i)
	if l.path == "passes" {
		out.passPath, out.pass = out.path, scalarField(n, "name")
	}
	return out
}

func (l location) String() string {
	if l.passPath == "" {
		if l.path == "" {
			return "the top level"
		}
		return l.path
	}
	who := l.passPath
	if l.pass != "" {
		who = fmt.Sprintf("pass %q", l.pass)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(l.path, l.passPath), ".")
	if rel == "" {
		return who
	}
	return who + ": " + rel
}

// scalarField is the value of key in the mapping n, or "".
func scalarField(n *yaml.Node, key string) string {
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// schemaCheck walks the YAML tree against the Config types before decoding, so that
// every problem is reported with its line and its place in the file's own words:
// unknown fields (with the nearest valid name), values of the wrong kind, bad durations.
type schemaCheck struct {
	errs    []error
	lines   map[string]int        // path -> line of its key (or list entry)
	written map[*yaml.Node]string // expanded values as the file wrote them
	seen    map[*yaml.Node]bool
}

func newSchemaCheck(written map[*yaml.Node]string) *schemaCheck {
	return &schemaCheck{lines: map[string]int{}, written: written, seen: map[*yaml.Node]bool{}}
}

func (s *schemaCheck) fail(n *yaml.Node, at location, format string, args ...any) {
	s.errs = append(s.errs, fmt.Errorf("line %d: %s: %s", n.Line, at, fmt.Sprintf(format, args...)))
}

// shown is a value as the file wrote it (before ${VAR} expansion, so that a secret
// from the environment never shows).
func (s *schemaCheck) shown(n *yaml.Node) string {
	if w, ok := s.written[n]; ok {
		return w
	}
	return n.Value
}

// check reports every problem of n, which should hold a value of type t.
func (s *schemaCheck) check(n *yaml.Node, t reflect.Type, at location) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || s.seen[n] {
		return
	}
	s.seen[n] = true
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // unset
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		s.duration(n, at)
	case t == columnsType:
		s.columns(n, at)
	case reflect.PointerTo(t).Implements(unmarshalerType):
		// a type that reads its own YAML reports its own errors
	case t.Kind() == reflect.Struct:
		s.mapping(n, t, at)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			s.fail(n, at, "want a list, got %s", kindName(n))
			return
		}
		for i, c := range n.Content {
			entry := at.item(i, c)
			s.lines[entry.path] = c.Line // a field left out of an entry is reported here
			s.check(c, t.Elem(), entry)
		}
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			s.fail(n, at, "want a mapping, got %s", kindName(n))
		}
	case t.Kind() == reflect.Interface:
		// any value
	default:
		s.scalar(n, t, at)
	}
}

func (s *schemaCheck) duration(n *yaml.Node, at location) {
	if n.Kind != yaml.ScalarNode {
		s.fail(n, at, "want a duration such as 30d, 12h or 90s, got %s", kindName(n))
		return
	}
	if _, err := parseDuration(strings.TrimSpace(n.Value)); err != nil {
		s.fail(n, at, "%q %v", s.shown(n), err)
	}
}

// columns checks a key or foreign key: one column name, or a list of them.
func (s *schemaCheck) columns(n *yaml.Node, at location) {
	const want = "want a column name or a list of column names"
	switch n.Kind {
	case yaml.ScalarNode:
		return
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.AliasNode && c.Alias != nil {
				c = c.Alias
			}
			if c.Kind != yaml.ScalarNode {
				s.fail(c, at, "%s, got a list holding %s", want, kindName(c))
				return
			}
		}
		return
	}
	s.fail(n, at, "%s, got %s", want, kindName(n))
}

func (s *schemaCheck) scalar(n *yaml.Node, t reflect.Type, at location) {
	want := map[reflect.Kind]string{reflect.String: "a text value", reflect.Bool: "true or false"}[t.Kind()]
	if want == "" {
		want = "a whole number"
	}
	if n.Kind != yaml.ScalarNode {
		s.fail(n, at, "want %s, got %s", want, kindName(n))
		return
	}
	if t.Kind() == reflect.String {
		return
	}
	if err := n.Decode(reflect.New(t).Interface()); err != nil || !whole(n, t) {
		s.fail(n, at, "want %s, got %q", want, s.shown(n))
	}
}

// whole reports whether n, read into a field of integer type t, loses nothing: the YAML
// decoder truncates a number such as 1.5 to 1 without a word.
func whole(n *yaml.Node, t reflect.Type) bool {
	if n.ShortTag() != "!!float" || t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64 {
		return true
	}
	var f float64
	return n.Decode(&f) == nil && f == math.Trunc(f)
}

func (s *schemaCheck) mapping(n *yaml.Node, t reflect.Type, at location) {
	if n.Kind != yaml.MappingNode {
		s.fail(n, at, "want a mapping of fields, got %s", kindName(n))
		return
	}
	fields := yamlFields(t)
	given := map[string]int{} // key -> its line, to refuse a key given twice
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if key.Value == "<<" && key.ShortTag() == "!!merge" {
			s.merge(value, t, at)
			continue
		}
		if first, ok := given[key.Value]; ok {
			s.fail(key, at, "%s is given twice (first at line %d)", key.Value, first)
			continue
		}
		given[key.Value] = key.Line
		f, ok := fields[key.Value]
		if !ok {
			s.fail(key, at, "unknown field %q%s", key.Value, suggestion(key.Value, fields))
			continue
		}
		child := at.field(key.Value)
		s.lines[child.path] = key.Line
		s.check(value, f.Type, child)
	}
}

// merge checks the mappings a YAML merge key (<<: *defaults) brings in.
func (s *schemaCheck) merge(n *yaml.Node, t reflect.Type, at location) {
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			s.check(c, t, at)
		}
		return
	}
	s.check(n, t, at)
}

// yamlFields maps the YAML names of t's fields to the fields.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

// suggestion is " (did you mean x?)" for the valid name nearest to name, or the list of
// valid names when none is near.
func suggestion[V any](name string, valid map[string]V) string {
	names := slices.Sorted(maps.Keys(valid))
	best, bestDist := "", 1<<30
	for _, v := range names {
		if d := editDistance(strings.ToLower(name), v); d < bestDist {
			best, bestDist = v, d
		}
	}
	if best != "" && (bestDist <= 2 || bestDist*3 <= len(best) || strings.Contains(best, strings.ToLower(name)) && len(name) >= 3) {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return fmt.Sprintf(" (valid fields: %s)", strings.Join(names, ", "))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
