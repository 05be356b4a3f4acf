package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// errEmptyConfig is a configuration file with nothing in it but comments or blanks.
var errEmptyConfig = errors.New("the file is empty (or holds only comments): want at least the database and passes sections")

// LoadConfig reads the file at path. The YAML is parsed first; ${VAR} is then expanded
// inside each value (never in the raw text, so a value holding '#' or ': ' stays whole);
// unknown fields, values of the wrong kind and bad durations are refused with their
// line; RETENTION_DATABASE_URL overrides the DSN.
func LoadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := parseConfig(raw, os.LookupEnv)
	if err != nil {
		return nil, inFile(path, err)
	}
	if url := os.Getenv("RETENTION_DATABASE_URL"); url != "" {
		c.Database.DSN = url
		c.dsnFromEnv = true
	}
	return c, nil
}

// ParseConfig reads a configuration from raw, as LoadConfig reads a file (without
// RETENTION_DATABASE_URL), so a program that embeds a node can keep its configuration
// in its own source instead of a file beside it.
func ParseConfig(raw []byte) (*Config, error) {
	return parseConfig(raw, os.LookupEnv)
}

// inFile leads each of err's messages (one a line when there are several) with
// "config PATH: ", so every line of a read error says which file it is about.
func inFile(path string, err error) error {
	all := flatten(err)
	if len(all) == 1 {
		return fmt.Errorf("config %s: %w", path, err)
	}
	for i, e := range all {
		all[i] = fmt.Errorf("config %s: %w", path, e)
	}
	return errors.Join(all...)
}

// parseConfig is LoadConfig on the file's bytes, with lookup reading the environment.
func parseConfig(raw []byte, lookup func(string) (string, bool)) (*Config, error) {
	root, err := parseDocument(raw)
	if err != nil {
		return nil, err
	}
	exp := newExpander(lookup)
	exp.walk(root, location{})
	if err := errors.Join(exp.errs...); err != nil {
		return nil, err
	}
	sc := newSchemaCheck(exp.written)
	sc.check(root, configType, location{})
	if err := errors.Join(sc.errs...); err != nil {
		return nil, err
	}
	var c Config
	if err := root.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	c.lines = sc.lines
	return &c, nil
}

// parseDocument returns the file's one document's top mapping.
func parseDocument(raw []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errEmptyConfig
		}
		return nil, syntaxError(raw, err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		line := second.Line
		if err != nil || line == 0 {
			return nil, errors.New("holds more than one YAML document (a second '---'): want one")
		}
		return nil, fmt.Errorf("line %d: a second YAML document starts here: want one", line)
	}
	if len(doc.Content) == 0 {
		return nil, errEmptyConfig
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, errEmptyConfig
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of sections (database, node, passes, ...), got %s", root.Line, kindName(root))
	}
	return root, nil
}

// kindName says what a node is, in YAML's terms rather than Go's.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	default:
		return "a single value"
	}
}
