package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/retentionkit/retention/multinode/harness"
)

// owned registers c.passes passes (all on one small table with nothing to delete, so
// each sweep is one empty batch) on three members, and measures the time from the
// first process's start until every pass has an owner on /cluster that all members
// agree on, and until every pass has swept (a ledger run); then it kills a member and
// measures the same, from the kill, for the passes placed on it.
func (b *bench) owned(ctx context.Context, report *strings.Builder) error {
	var yaml strings.Builder
	names := make([]string, b.c.passes)
	for i := range names {
		names[i] = fmt.Sprintf("owned-%04d", i)
		yaml.WriteString(strings.Replace(harness.PassYAML("idle", harness.PassOptions{SweepInterval: time.Hour}),
			"name: idle", "name: "+names[i], 1))
	}
	f, err := b.newFleet(ctx, "owned", []harness.Table{{Name: "idle", Rows: 100}}, harness.ClusterOptions{}, harness.PassOptions{}, yaml.String())
	if err != nil {
		return err
	}
	defer f.stop(ctx)
	began := time.Now()
	if _, err := f.StartN(ctx, 3); err != nil {
		return err
	}
	ownedAt, err := waitOwned(ctx, f, names, began)
	if err != nil {
		return err
	}
	sweptAt, err := b.waitSwept(ctx, names, began, "")
	if err != nil {
		return err
	}
	victim := f.Running()[0]
	member := victim.Member()
	owners, err := f.Owners(ctx, names)
	if err != nil {
		return err
	}
	var mine []string
	for _, name := range names {
		if owners[name] == member {
			mine = append(mine, name)
		}
	}
	f.Leave(victim.Name)
	killed := time.Now()
	if err := victim.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	if err := f.WaitMembers(ctx, time.Minute, 2); err != nil {
		return err
	}
	reowned, err := waitOwned(ctx, f, names, killed)
	if err != nil {
		return err
	}
	reswept, err := b.waitSwept(ctx, mine, killed, member)
	if err != nil {
		return err
	}
	fmt.Fprintf(report, "### %d passes on three members\n\n%d passes on one table with nothing to delete (each sweep is one empty batch through the lock and a slot; "+
		"two cluster-wide slots). *Owned*: every member's `/cluster` names the same owner for every pass. *Swept*: every pass has started a sweep (a run in the ledger). `/cluster` is polled every 200 ms and each view reads the lock holders of all %d identities, so *owned* includes up to a poll and a view. "+
		"After start the clock starts when the first process starts; after the kill, at the SIGKILL of one member, counting the %d passes `/cluster` placed on it.\n\n",
		len(names), len(names), len(names), len(mine))
	fmt.Fprintln(report, "| measured | time |")
	fmt.Fprintln(report, "| --- | --- |")
	fmt.Fprintf(report, "| start → all owned | %v |\n| start → every pass has started a sweep | %v |\n| kill -9 → all owned by the survivors | %v |\n| kill -9 → each of the killed member's passes has started a sweep on a survivor | %v |\n\n",
		ownedAt.Round(time.Millisecond), sweptAt.Round(time.Millisecond), reowned.Round(time.Millisecond), reswept.Round(time.Millisecond))
	return nil
}

// waitOwned waits until every running member's /cluster agrees on an owner for every
// name and returns the time since from.
func waitOwned(ctx context.Context, f *fleet, names []string, from time.Time) (time.Duration, error) {
	var at time.Duration
	err := harness.Poll(ctx, 3*time.Minute, "every pass owned", func() (bool, error) {
		_, err := f.Owners(ctx, names)
		at = time.Since(from)
		return err == nil, nil
	})
	return at, err
}

// waitSwept waits until each name has a ledger run that started after from on a member
// other than notMember and returns the time from from to the last of those starts.
func (b *bench) waitSwept(ctx context.Context, names []string, from time.Time, notMember string) (time.Duration, error) {
	var last time.Time
	err := harness.Poll(ctx, 3*time.Minute, fmt.Sprintf("%d passes swept", len(names)), func() (bool, error) {
		var n int64
		var at *time.Time
		err := b.db.QueryRowContext(ctx, `SELECT count(*), max(first) FROM (
				SELECT name, min(start_time) AS first FROM retention_metadata
				WHERE start_time >= $1 AND coalesce(node_id, '') <> $2 AND name LIKE 'owned-%' GROUP BY name) s
			WHERE name = ANY(string_to_array($3, ','))`, from, notMember, strings.Join(names, ",")).Scan(&n, &at)
		if err != nil {
			return false, err
		}
		if at != nil {
			last = *at
		}
		return int(n) == len(names), nil
	})
	return last.Sub(from), err
}
