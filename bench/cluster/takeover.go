package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// takeover kills, c.reps times, the member of three that last committed a batch on the
// most of six draining passes, and measures the time from the SIGKILL to each of its
// passes' next batch on a survivor (the batch log's commit time), and to its sessions
// (locks and slots with them) being gone. The killed node is started again, as a new
// member, before the next kill, and every table is topped up so each kill lands
// mid-drain.
func (b *bench) takeover(ctx context.Context, report *strings.Builder) error {
	const per = 30_000
	tables := make([]harness.Table, 6)
	for i := range tables {
		tables[i] = harness.Table{Name: fmt.Sprintf("moving%d", i+1), Rows: per}
	}
	f, err := b.newFleet(ctx, "takeover", tables,
		harness.ClusterOptions{MaxConcurrentDeletes: 6, NodeMaxConcurrentDeletes: 6},
		harness.PassOptions{BatchSize: 500, BatchDelay: 50 * time.Millisecond, MaxBatchesPerSweep: 40, SweepInterval: time.Second}, "")
	if err != nil {
		return err
	}
	defer f.stop(ctx)
	if _, err := f.StartN(ctx, 3); err != nil {
		return err
	}
	var moved, freed []time.Duration
	kills := 0
	for rep := 0; rep < b.c.reps; rep++ {
		mark := time.Now() // before the top-ups: a table may drain its own before the last is written
		for i := range tables {
			if err := b.db.AddRows(ctx, tables[i].Name, tables[i].Rows+1, tables[i].Rows+per); err != nil {
				return err
			}
			tables[i].Rows += per
		}
		if err := harness.Poll(ctx, time.Minute, "a batch on every table", func() (bool, error) {
			n, err := b.db.Count(ctx, `SELECT count(DISTINCT tbl) FROM mn_batches WHERE at > $1`, mark)
			return int(n) == len(tables), err
		}); err != nil {
			return err
		}
		victim, passes, err := b.busiest(ctx, f)
		if err != nil {
			return err
		}
		app := victim.AppName()
		f.Leave(victim.Name)
		killed := time.Now()
		if err := victim.Signal(syscall.SIGKILL); err != nil {
			return err
		}
		kills++
		if err := harness.Poll(ctx, time.Minute, "the killed member's sessions gone", func() (bool, error) {
			sessions, locks, err := b.db.Sessions(ctx, app)
			if err == nil && sessions == 0 && locks == 0 {
				freed = append(freed, time.Since(killed))
				return true, nil
			}
			return false, err
		}); err != nil {
			return err
		}
		got := map[string]bool{}
		if err := harness.Poll(ctx, time.Minute, "the next batch of every moved pass", func() (bool, error) {
			for _, tbl := range passes {
				if got[tbl] {
					continue
				}
				at, _, ok, err := b.db.FirstBatchAfter(ctx, tbl, killed, app)
				if err != nil {
					return false, err
				}
				if ok {
					got[tbl] = true
					moved = append(moved, at.Sub(killed))
				}
			}
			return len(got) == len(passes), nil
		}); err != nil {
			return err
		}
		if _, err := f.Start(victim.Name); err != nil {
			return err
		}
		if err := f.WaitMembers(ctx, time.Minute, 3); err != nil {
			return err
		}
		for _, n := range f.Running() {
			if _, err := n.MemberID(ctx, time.Minute); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(report, "### Takeover after `kill -9`\n\nThree members, six passes draining (500-row batches, 50 ms apart, every pass with a slot); "+
		"the member that last deleted on the most tables is killed with SIGKILL %d times, and restarted as a new member before the next kill. "+
		"Times are from the kill to the commit of each moved pass's next batch on a survivor (read from a statement trigger's log in the database), "+
		"and to the killed member's sessions, with their advisory locks and slots, being gone from `pg_stat_activity`.\n\n", kills)
	fmt.Fprintln(report, "| measured | median | min | max | n |")
	fmt.Fprintln(report, "| --- | --- | --- | --- | --- |")
	fmt.Fprintln(report, spreadOf(moved).row("kill -9 → next batch of a moved pass"))
	fmt.Fprintln(report, spreadOf(freed).row("kill -9 → the killed member's sessions gone"))
	fmt.Fprintln(report)
	return nil
}

// busiest is the running node that committed the last batch on the most tables, and
// those tables.
func (b *bench) busiest(ctx context.Context, f *fleet) (*harness.Node, []string, error) {
	last, err := b.db.LastBatchApp(ctx, time.Now())
	if err != nil {
		return nil, nil, err
	}
	var best *harness.Node
	var tables []string
	for _, n := range f.Running() {
		var mine []string
		for tbl, app := range last {
			if app == n.AppName() {
				mine = append(mine, tbl)
			}
		}
		if len(mine) > len(tables) {
			best, tables = n, mine
		}
	}
	if best == nil {
		return nil, nil, fmt.Errorf("no running node committed a batch")
	}
	slices.Sort(tables)
	return best, tables, nil
}
