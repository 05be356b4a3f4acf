package config

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestKeyColumnsInConfig: key and foreign_key take one column or a list, and
// timestamp_zone reaches the table declaration.
func TestKeyColumnsInConfig(t *testing.T) {
	t.Parallel()
	const doc = `
passes:
  - name: orders
    table: orders
    key: [tenant_id, id]
    timestamp: placed_at
    timestamp_zone: Europe/Berlin
    retention_period: 30d
    children:
      - {table: order_line, foreign_key: [tenant_id, order_id], key: line_id}
      - {table: order_note, foreign_key: [tenant_id, order_id], key: [tenant_id, note_id],
         children: [{table: note_blob, foreign_key: [tenant_id, note_id]}]}
  - name: events
    table: events
    key: id
    timestamp: at
    retention_period: 1d
`
	var c struct{ Passes []PassConfig }
	if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	_, spec, err := c.Passes[0].Build()
	if err != nil {
		t.Fatal(err)
	}
	if spec.Key != "" || !slices.Equal(spec.KeyColumns, []string{"tenant_id", "id"}) || spec.TimestampZone != "Europe/Berlin" {
		t.Fatalf("spec = %+v", spec)
	}
	line, note := spec.Children[0], spec.Children[1]
	if !slices.Equal(line.ForeignKeyColumns, []string{"tenant_id", "order_id"}) || line.Key != "line_id" ||
		!slices.Equal(note.KeyColumns, []string{"tenant_id", "note_id"}) || !slices.Equal(note.Children[0].ForeignKeyColumns, []string{"tenant_id", "note_id"}) {
		t.Fatalf("children = %+v", spec.Children)
	}
	if _, spec, err := c.Passes[1].Build(); err != nil || spec.Key != "id" || spec.KeyColumns != nil {
		t.Fatalf("one-column key: %+v %v", spec, err)
	}

	var bad struct{ Passes []PassConfig }
	err = yaml.Unmarshal([]byte("passes:\n  - name: x\n    key: {a: 1}\n"), &bad)
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("a mapping as key: %v, want an error naming line 3", err)
	}
}
