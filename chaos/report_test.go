//go:build chaos

package chaos

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// record is one scenario's line in the suite's table (docs/reliability.md).
type record struct {
	name, injected, expected string
	exits                    []int
	fig                      figures
	measured                 bool
	duration                 time.Duration
	failed                   bool
}

// results collects the records in the order the scenarios ran.
type results struct {
	mu   sync.Mutex
	recs []*record
}

// begin starts the record of the running scenario; it is closed when the test ends.
func (r *results) begin(t *testing.T, injected, expected string) *record {
	rec := &record{name: t.Name(), injected: injected, expected: expected}
	began := time.Now()
	r.mu.Lock()
	r.recs = append(r.recs, rec)
	r.mu.Unlock()
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		rec.duration = time.Since(began)
		rec.failed = t.Failed()
	})
	return rec
}

// exit notes an exit code of one of the scenario's node commands.
func (rec *record) exit(code int) int {
	rec.exits = append(rec.exits, code)
	return code
}

// final notes the figures the scenario ended with.
func (rec *record) final(g figures) {
	rec.fig, rec.measured = g, true
}

// print writes the table in the form docs/reliability.md shows it.
func (r *results) print(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(w, "\n| scenario | injected | expected exit | exit | rows deleted / kept | wrongly deleted | half-deleted | runs left InProgress | duration | result |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, rec := range r.recs {
		var exits []string
		for _, c := range rec.exits {
			exits = append(exits, fmt.Sprint(c))
		}
		figs := "not measured | - | - | -"
		if rec.measured {
			g := rec.fig
			figs = fmt.Sprintf("%d / %d | %d | %d | %d", g.deleted, g.kept, g.wrongly, g.half, g.inProgress)
		}
		result := "pass"
		if rec.failed {
			result = "FAIL"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.1fs | %s |\n", strings.TrimPrefix(rec.name, "Test"), rec.injected, rec.expected,
			strings.Join(exits, ", "), figs, rec.duration.Seconds(), result)
	}
}
