package config

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envName is what ${...} may name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expander replaces ${VAR} and ${VAR:-default} inside the scalar values of a parsed
// YAML tree. An unset variable without a default is an error naming it; a value is
// never shown, since it may be a secret. $${ stands for a literal ${.
type expander struct {
	lookup  func(string) (string, bool)
	errs    []error
	seen    map[*yaml.Node]bool
	written map[*yaml.Node]string // each changed node's text as the file wrote it
}

func newExpander(lookup func(string) (string, bool)) *expander {
	return &expander{lookup: lookup, seen: map[*yaml.Node]bool{}, written: map[*yaml.Node]string{}}
}

// walk expands every value under n (keys stay as written); at names n in messages.
func (e *expander) walk(n *yaml.Node, at location) {
	if n == nil || e.seen[n] {
		return
	}
	e.seen[n] = true
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			e.walk(n.Content[i+1], at.field(n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			e.walk(c, at.item(i, c))
		}
	case yaml.ScalarNode:
		e.scalar(n, at)
	}
}

func (e *expander) scalar(n *yaml.Node, at location) {
	if !strings.Contains(n.Value, "${") {
		return
	}
	out, err := expand(n.Value, e.lookup)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("line %d: %s: %w", n.Line, at, err))
		return
	}
	e.written[n] = n.Value
	n.Value = out
	if n.Style == 0 {
		n.Tag = "" // a plain value takes the type of what it expanded to: batch_size: ${N}
	}
}

// expand replaces the variables of s.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' { // $${ is a literal ${
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf(`"${" has no closing "}" (write $${ for a literal ${)`)
		}
		value, err := variable(s[i+2:i+end], lookup)
		if err != nil {
			return "", err
		}
		b.WriteString(value)
		s = s[i+end+1:]
	}
}

// variable resolves the inside of one ${...}: NAME or NAME:-default.
func variable(inner string, lookup func(string) (string, bool)) (string, error) {
	name, def, hasDefault := strings.Cut(inner, ":-")
	if !envName.MatchString(name) {
		return "", fmt.Errorf("${...} must name an environment variable (letters, digits and _, not starting with a digit)")
	}
	v, set := lookup(name)
	if hasDefault && v == "" {
		return def, nil
	}
	if !set {
		return "", fmt.Errorf("environment variable %s is not set (give a default with ${%s:-value})", name, name)
	}
	return v, nil
}
