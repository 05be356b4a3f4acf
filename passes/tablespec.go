package passes

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/retentionkit/retention/core"
	"github.com/retentionkit/retention/core/trees"
)

// OnDelete says what happens to a child table's rows when their parent row expires.
type OnDelete string

// The child policies.
const (
	// OnDeleteDelete deletes the child rows first (nested children deepest first).
	OnDeleteDelete OnDelete = "delete"
	// OnDeleteSetNull clears the child's reference and keeps the child row.
	OnDeleteSetNull OnDelete = "set_null"
	// OnDeleteBlock keeps the parent while any such child references it ("in use").
	OnDeleteBlock OnDelete = "block"
)

// TimestampFormat says how the timestamp column stores time.
type TimestampFormat string

// The timestamp formats.
const (
	// TimestampNative is the database's own time type (PostgreSQL timestamp, timestamptz
	// or date) or, on SQLite, text such as bun writes for a time.Time (UTC as
	// "2006-01-02 15:04:05.999999+00:00"); SQLite texts with any offset are compared as
	// instants.
	TimestampNative TimestampFormat = "time"
	// TimestampUnixSeconds is an integer count of seconds since 1970 UTC.
	TimestampUnixSeconds TimestampFormat = "unix"
	// TimestampUnixMillis is an integer count of milliseconds since 1970 UTC.
	TimestampUnixMillis TimestampFormat = "unix_ms"
)

// Filter narrows a table pass to rows whose Column holds one of In: only those expire.
// A nil value in In matches rows whose Column is NULL (SQL's IN never would), so
// `in: [done, null]` means "done or not set".
type Filter struct {
	Column string
	In     []any
}

// ChildSpec is a table whose rows reference the parent's key.
type ChildSpec struct {
	// Table is the child table.
	Table string
	// ForeignKey is the child's column that holds the parent's key.
	ForeignKey string
	// ForeignKeyColumns, instead of ForeignKey, are the child's columns that hold a
	// composite parent key, in the order of the parent's key columns.
	ForeignKeyColumns []string
	// Key is the child's own key, which its children reference; default "id".
	Key string
	// KeyColumns, instead of Key, is the child's own composite key.
	KeyColumns []string
	// OnDelete is delete (default), set_null or block. block is allowed on direct
	// children of the swept table only.
	OnDelete OnDelete
	// Children are the child's own children (for delete children).
	Children []ChildSpec
}

// TableSpec declares a table pass: which rows of which table expire, and what happens
// to the rows that reference them.
type TableSpec struct {
	// Table is the table to sweep (optionally schema-qualified).
	Table string
	// Key is its unique key column; batches are deleted by key.
	Key string
	// KeyColumns, instead of Key, is a composite unique key (tenant_id, id, say): the
	// cursor, the deletes and the children then use all of its columns, in this order.
	KeyColumns []string
	// Timestamp is the column compared with the cutoff.
	Timestamp string
	// TimestampFormat is how Timestamp stores time; empty means TimestampNative.
	TimestampFormat TimestampFormat
	// TimestampZone is the IANA zone (Europe/Berlin, say) whose wall time a PostgreSQL
	// "timestamp without time zone" column holds; empty means UTC. The cutoff is
	// converted to that zone's wall time before it is compared.
	TimestampZone string
	// Filter, when set, limits the pass to rows whose column holds one of its values.
	Filter *Filter
	// Where is an extra condition ANDed to the selection: one boolean expression over the
	// table (see checkWhere for what is refused, and ValidateStartup, which has the
	// database check it). It is TRUSTED SQL: it must come from the operator's own
	// configuration, never from a user.
	Where string
	// ProbeQuery is the query an adaptive pass times to see the workload's latency;
	// empty means a lookup of the table's newest key (see Table.Signals). TRUSTED SQL,
	// like Where: one SELECT (or WITH) with the same rules, run as given.
	ProbeQuery string
	// Children are the tables that reference the swept table's key.
	Children []ChildSpec
	// StrictReferences makes a restricting foreign key into the swept table (or a delete
	// child) from a table Children does not list fail startup instead of warning: such a
	// key holds every row it references, found only by bisecting its batch.
	StrictReferences bool
	// StatementTimeout bounds each statement of a batch (PostgreSQL's statement_timeout;
	// on SQLite the whole batch's context). Zero means no bound beyond the batch's.
	StatementTimeout time.Duration
	// SynchronousCommit is PostgreSQL's synchronous_commit for the sweep's connection;
	// empty means DefaultSynchronousCommit ("off"). A sweep's commit then returns before
	// its WAL reaches the disk. That is safe for a retention pass: a crash can lose only
	// the last few hundred milliseconds of committed deletes, whose rows are still
	// expired and are deleted again by the next sweep; nothing is ever lost that should
	// be kept. Set "on" (or "remote_apply", ...) when something downstream must not see
	// a delete that a crash could undo. SQLite ignores it (its DSN sets synchronous).
	SynchronousCommit string
	// AnalyzeAfterShare is the share of the table's rows a sweep must delete for the
	// table to be analyzed when it ends (see table_hygiene.go); zero means
	// DefaultAnalyzeAfterShare (0.1), a negative value never.
	AnalyzeAfterShare float64
	// VacuumAfter also vacuums the table after such a sweep: plain VACUUM on
	// PostgreSQL, PRAGMA incremental_vacuum on a SQLite database with
	// auto_vacuum = incremental.
	VacuumAfter bool
	// VacuumTimeout bounds that hygiene (ANALYZE and VACUUM, as PostgreSQL's
	// statement_timeout); zero means DefaultVacuumTimeout.
	VacuumTimeout time.Duration
	// Partitions, on a PostgreSQL range-partitioned table, retires whole expired
	// partitions before the row path runs (PartitionSpec); nil: rows only.
	Partitions *PartitionSpec
}

// DefaultSynchronousCommit is the synchronous_commit a sweep's connection uses when its
// TableSpec names none: asynchronous commits, for the reason SynchronousCommit gives.
const DefaultSynchronousCommit = "off"

// synchronousCommitValues are the settings PostgreSQL accepts for synchronous_commit.
var synchronousCommitValues = []string{"off", "local", "remote_write", "on", "remote_apply"}

// Validate returns every problem with the spec at once, each naming the pass and the
// field in configuration spelling (children[0].foreign_key, ...).
func (s TableSpec) Validate(name string) error {
	fields := map[string][]string{}
	add := func(field, format string, args ...any) {
		fields[field] = append(fields[field], fmt.Sprintf("pass %q: %s %s", name, field, fmt.Sprintf(format, args...)))
	}
	identifier := func(field, value string) {
		if problem := checkIdentifier(value); problem != "" {
			add(field, "%s", problem)
		}
	}
	identifier("table", s.Table)
	columns("key", s.Key, s.KeyColumns, add, identifier)
	identifier("timestamp", s.Timestamp)
	switch s.TimestampFormat {
	case "", TimestampNative:
		if s.TimestampZone != "" {
			if _, err := time.LoadLocation(s.TimestampZone); err != nil || strings.EqualFold(s.TimestampZone, "local") {
				add("timestamp_zone", "must be an IANA time zone name (Europe/Berlin, UTC), got %s", quoteForMessage(s.TimestampZone))
			}
		}
	case TimestampUnixSeconds, TimestampUnixMillis:
		if s.TimestampZone != "" {
			add("timestamp_zone", "applies to timestamp_format: time only; %s counts from 1970 UTC", s.TimestampFormat)
		}
	default:
		add("timestamp_format", "must be %q, %q or %q, got %q", TimestampNative, TimestampUnixSeconds, TimestampUnixMillis, s.TimestampFormat)
	}
	if s.Filter != nil {
		identifier("filter.column", s.Filter.Column)
		if len(s.Filter.In) == 0 {
			add("filter.in", "must list at least one value")
		}
		for i, v := range s.Filter.In {
			if !filterValueOK(v) {
				add(fmt.Sprintf("filter.in[%d]", i), "must be a single value (text, number, true/false or null), got %s", valueKind(v))
			}
		}
	}
	if s.Where != "" {
		if problem := checkWhere(s.Where); problem != "" {
			add("where", "%s", problem)
		}
	}
	if s.ProbeQuery != "" {
		if problem := checkProbeQuery(s.ProbeQuery); problem != "" {
			add("probe_query", "%s", problem)
		}
	}
	switch {
	case s.StatementTimeout < 0:
		add("statement_timeout", "must not be negative, got %v", s.StatementTimeout)
	case s.StatementTimeout > 0 && s.StatementTimeout < time.Millisecond:
		// PostgreSQL counts whole milliseconds and reads 0 as "no timeout".
		add("statement_timeout", "must be 0 (no timeout) or at least 1ms, got %v", s.StatementTimeout)
	}
	if s.SynchronousCommit != "" && !slices.Contains(synchronousCommitValues, s.SynchronousCommit) {
		add("synchronous_commit", "must be one of %s, got %s", strings.Join(synchronousCommitValues, ", "), quoteForMessage(s.SynchronousCommit))
	}
	if s.AnalyzeAfterShare > 1 {
		add("analyze_after_share", "must be at most 1 (a share of the table's rows), got %v", s.AnalyzeAfterShare)
	}
	if s.VacuumTimeout < 0 {
		add("vacuum_timeout", "must not be negative, got %v", s.VacuumTimeout)
	}
	validateChildren(s.Children, "children", len(s.keyColumns()), true, add, identifier)
	s.validatePartitions(add, identifier)
	if len(fields) == 0 {
		return nil
	}
	return core.NewValidationErrorMessage(fmt.Sprintf("pass %q has an invalid table declaration", name), fields)
}

func validateChildren(children []ChildSpec, path string, parentKeys int, direct bool, add func(string, string, ...any), identifier func(string, string)) {
	for i, c := range children {
		p := fmt.Sprintf("%s[%d]", path, i)
		n := &childNode{spec: c}
		if fk := len(n.foreignKey()); fk != parentKeys {
			add(p+".foreign_key", "has %d column(s), but the key it references has %d", fk, parentKeys)
		}
		identifier(p+".table", c.Table)
		columns(p+".foreign_key", c.ForeignKey, c.ForeignKeyColumns, add, identifier)
		if c.Key != "" || len(c.KeyColumns) > 0 {
			columns(p+".key", c.Key, c.KeyColumns, add, identifier)
		}
		switch c.OnDelete {
		case "", OnDeleteDelete:
		case OnDeleteSetNull, OnDeleteBlock:
			if len(c.Children) > 0 {
				add(p+".children", "are only allowed under on_delete: delete, since a %s child is kept", c.OnDelete)
			}
			if c.OnDelete == OnDeleteBlock && !direct {
				add(p+".on_delete", "block is only allowed on direct children of the swept table")
			}
		default:
			add(p+".on_delete", "must be delete, set_null or block, got %q", c.OnDelete)
		}
		validateChildren(c.Children, p+".children", len(n.key()), false, add, identifier)
	}
}

// columns checks a column-or-columns field: one name, or a list of distinct names.
func columns(field, one string, many []string, add func(string, string, ...any), identifier func(string, string)) {
	switch {
	case one != "" && len(many) > 0:
		add(field, "is given both as one column and as a list")
	case len(many) == 0:
		identifier(field, one)
	default:
		for i, c := range many {
			identifier(fmt.Sprintf("%s[%d]", field, i), c)
			if slices.Contains(many[:i], c) {
				add(field, "lists %s twice", c)
			}
		}
	}
}

// columnsOf is a column-or-columns field as a list.
func columnsOf(one string, many []string) []string {
	if len(many) > 0 {
		return many
	}
	return []string{one}
}

// keyColumns is the swept table's key, one column or several.
func (s TableSpec) keyColumns() []string { return columnsOf(s.Key, s.KeyColumns) }

// childNode is one child table placed in the tree under the swept table.
type childNode struct {
	spec   ChildSpec
	parent *childNode // nil: references the swept table
	depth  int
}

// key is the child's own key columns, which its children reference.
func (c *childNode) key() []string {
	if c.spec.Key == "" && len(c.spec.KeyColumns) == 0 {
		return []string{"id"}
	}
	return columnsOf(c.spec.Key, c.spec.KeyColumns)
}

// foreignKey is the child's columns that hold its parent's key.
func (c *childNode) foreignKey() []string {
	return columnsOf(c.spec.ForeignKey, c.spec.ForeignKeyColumns)
}

func (c *childNode) onDelete() OnDelete {
	if c.spec.OnDelete == "" {
		return OnDeleteDelete
	}
	return c.spec.OnDelete
}

// orderedChildren flattens the child tree and orders it deepest first (a child's rows are
// handled before its parent's), using the closure of the tree to find each depth.
func orderedChildren(children []ChildSpec) ([]*childNode, error) {
	var nodes []*childNode
	var walk func([]ChildSpec, *childNode)
	walk = func(cs []ChildSpec, parent *childNode) {
		for _, c := range cs {
			n := &childNode{spec: c, parent: parent}
			nodes = append(nodes, n)
			walk(c.Children, n)
		}
	}
	walk(children, nil)
	index := map[*childNode]int{}
	tree := make([]trees.Node[int], len(nodes))
	for i, n := range nodes {
		index[n] = i
		tree[i] = trees.Node[int]{ID: i}
	}
	for i, n := range nodes {
		if n.parent != nil {
			p := index[n.parent]
			tree[i].Parent = &p
		}
	}
	type depthRow struct{ descendant, depth int }
	rows, err := trees.Compute(tree, func(_, d, depth int) depthRow { return depthRow{d, depth} })
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		nodes[r.descendant].depth = max(nodes[r.descendant].depth, r.depth)
	}
	ordered := slices.Clone(nodes)
	// Deeper first; declaration order among equals.
	slices.SortStableFunc(ordered, func(a, b *childNode) int { return b.depth - a.depth })
	return ordered, nil
}
