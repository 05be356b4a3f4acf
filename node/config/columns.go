package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Columns is a key or foreign key in the configuration: one column (`key: id`) or,
// for a composite key, a list (`key: [tenant_id, id]`).
type Columns []string

// UnmarshalYAML reads one column name or a list of them.
func (c *Columns) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var one string
		if err := n.Decode(&one); err != nil {
			return err
		}
		*c = Columns{one}
		return nil
	case yaml.SequenceNode:
		var many []string
		if err := n.Decode(&many); err != nil {
			return err
		}
		*c = many
		return nil
	}
	return fmt.Errorf("line %d: want a column name or a list of column names", n.Line)
}

// split gives the columns in the declaration's two spellings: one column, or a list
// of several.
func (c Columns) split() (string, []string) {
	if len(c) == 1 {
		return c[0], nil
	}
	return "", c
}
