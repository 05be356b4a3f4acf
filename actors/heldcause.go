package actors

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/retentionkit/retention/passes"
)

// heldCause names why a row stays in place, for the sweep's one summary of held rows:
// the constraint and the table PostgreSQL names, the database's text where it names
// neither (SQLite), "in quarantine" for a row set aside without a new attempt. false
// when err is no row of a table held by something (a cleanup's skip, say).
func heldCause(err error) (string, bool) {
	if errors.Is(err, passes.ErrQuarantined) {
		return quarantinedCause, true
	}
	var row *passes.RowError
	if !errors.As(err, &row) {
		return "", false
	}
	switch {
	case row.Constraint != "" && row.Table != "":
		return fmt.Sprintf("constraint %s on %s", row.Constraint, row.Table), true
	case row.Constraint != "":
		return "constraint " + row.Constraint, true
	case row.Table != "":
		return "table " + row.Table, true
	}
	return row.Err.Error(), true
}

// quarantinedCause is the cause of rows held in quarantine, not due for another try:
// known from an earlier sweep, so a summary of only these is not news.
const quarantinedCause = "in quarantine, not due"

// heldNews reports whether a summary names a cause other than the quarantine's: rows
// the sweep found held, worth a warning; the quarantine's own are an info line.
func heldNews(by map[string]int) bool {
	for cause := range by {
		if cause != quarantinedCause {
			return true
		}
	}
	return false
}

// heldSummary writes the counts by cause, most rows first: "constraint x_fkey on x:
// 7142, in quarantine, not due: 3".
func heldSummary(by map[string]int) string {
	causes := slices.Collect(maps.Keys(by))
	slices.SortFunc(causes, func(a, b string) int {
		if by[a] != by[b] {
			return by[b] - by[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%s: %d", c, by[c])
	}
	return strings.Join(parts, "; ")
}

// heldTotal is the number of rows by counts.
func heldTotal(by map[string]int) int {
	n := 0
	for _, c := range by {
		n += c
	}
	return n
}
