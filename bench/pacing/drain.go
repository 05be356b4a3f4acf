package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/core/pacing"
	"github.com/retentionkit/retention/passes"
)

// variant is one pace under test: fixed batch and pause, or the adaptive controller
// with its defaults (batch_size 500 as its ceiling, no pause as its floor).
type variant struct {
	name            string
	adaptive        bool
	batch           int
	delay           time.Duration
	maxLag          time.Duration // adaptive: max_replica_lag; 0 is the default
	probe           string        // adaptive: probe_query; empty is the default
	withCommitProbe bool          // adaptive: Options.CommitProbe on (off by default; what the probe costs)
	noBusy          bool          // adaptive: the busy sessions left out (what that signal costs)
	none            bool          // no drain at all: the reference runs
	// The sweep's synchronous_commit: "on" for a +durable variant, else empty (the pass's default off).
	synchronousCommit string
}

// commitProbe is a probe_query that commits a WAL record and waits for its flush, as
// the foreground's own commits do: a read probe does not wait behind the sweep's WAL.
const commitProbe = "SELECT pg_logical_emit_message(true, 'retention-probe', '')"

// parseVariant reads "fixed:BATCH:DELAY", "adaptive", "adaptive:LAG" or "none";
// "adaptive-commit" is adaptive with commitProbe for its probe, "adaptive-commitprobe"
// adaptive with Options.CommitProbe on beside its read probe, "adaptive-nobusy" adaptive
// without the busy-sessions signal. A "+durable" suffix on a
// drain has its sweep commit with synchronous_commit on: whether the application's
// commits wait less when the sweep has flushed its own WAL.
func parseVariant(s string) (variant, error) {
	v, err := parsePace(strings.TrimSuffix(s, "+durable"))
	if err != nil {
		return variant{}, fmt.Errorf("variant %q: %w", s, err)
	}
	v.name = s
	if strings.HasSuffix(s, "+durable") {
		if v.none {
			return variant{}, fmt.Errorf("variant %q: +durable needs a drain", s)
		}
		v.synchronousCommit = "on"
	}
	return v, nil
}

// parsePace reads a variant without its +durable suffix.
func parsePace(s string) (variant, error) {
	f := strings.Split(s, ":")
	switch {
	case s == "none":
		return variant{none: true}, nil
	case (f[0] == "adaptive" || f[0] == "adaptive-commit" || f[0] == "adaptive-commitprobe" || f[0] == "adaptive-readonly" || f[0] == "adaptive-nobusy") && len(f) <= 2:
		// adaptive-readonly (adaptive without the commit probe) is what adaptive has been
		// since the probe became opt-in; it stays so the earlier runs' commands still run.
		v := variant{adaptive: true, batch: passes.DefaultBatchSize, withCommitProbe: f[0] == "adaptive-commitprobe", noBusy: f[0] == "adaptive-nobusy"}
		if f[0] == "adaptive-commit" {
			v.probe = commitProbe
		}
		if len(f) == 2 {
			d, err := time.ParseDuration(f[1])
			if err != nil {
				return v, err
			}
			v.maxLag = d
		}
		return v, nil
	case f[0] == "fixed" && len(f) == 3:
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return variant{}, err
		}
		d, err := time.ParseDuration(f[2])
		if err != nil {
			return variant{}, err
		}
		return variant{batch: n, delay: d}, nil
	}
	return variant{}, errors.New("want fixed:BATCH:DELAY, adaptive[:MAXLAG], adaptive-commit[:MAXLAG], adaptive-commitprobe[:MAXLAG], adaptive-nobusy[:MAXLAG] or none; a drain may end in +durable")
}

// batchAt is one batch as the runtime reported it, stamped when the event arrived.
type batchAt struct {
	at   time.Time
	rows int
	took time.Duration
}

// drainer is the project's table pass on its runtime, behind a gatePool the benchmark
// opens for "draining" windows and closes for the others.
type drainer struct {
	rt   *actors.Runtime
	pool *gatePool

	mu      sync.Mutex
	batches []batchAt
	changes []actors.PaceChanged
	drained int // sweeps that ended with the backlog gone
	failed  []error
}

func (d *drainer) Observe(e actors.Event) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch e := e.(type) {
	case actors.BatchDone:
		d.batches = append(d.batches, batchAt{time.Now(), e.Rows, e.Duration})
	case actors.PaceChanged:
		d.changes = append(d.changes, e)
	case actors.SweepDone:
		if e.Reason == actors.Drained {
			d.drained++
		}
	case actors.PassFailed:
		d.failed = append(d.failed, e.Err)
	}
	return nil
}

func startDrain(ctx context.Context, db *bun.DB, v variant) (*drainer, error) {
	tbl, err := passes.NewTable(db, "audit-log", passes.TableSpec{Table: "audit_log", Key: "id", Timestamp: "occurred_at", ProbeQuery: v.probe, SynchronousCommit: v.synchronousCommit})
	if err != nil {
		return nil, err
	}
	opts := passes.DefaultOptions()
	opts.RetentionPeriod = passes.Retain(30 * 24 * time.Hour)
	opts.BatchSize, opts.BatchDelay, opts.MaxStartupStagger = v.batch, v.delay, 0
	opts.MaxBatchesPerSweep, opts.SweepInterval = passes.Unbounded, 24*time.Hour
	opts.MaxReplicaLag, opts.CommitProbe = v.maxLag, v.withCommitProbe
	if v.adaptive {
		opts.Pacing = passes.PacingAdaptive
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	d := &drainer{pool: &gatePool{}}
	d.rt = actors.New(actors.Config{Logger: quiet, Observers: []actors.Observer{d},
		SlotPools: func(string, int) actors.AdmissionPool { return d.pool }})
	reg := tbl.Registration(opts)
	if v.noBusy {
		reg.Signals = withoutBusy{reg.Signals}
	}
	if err := d.rt.Register(reg); err != nil {
		return nil, err
	}
	if err := d.rt.Start(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// rowsIn counts the rows of the batches reported within [from, to].
func (d *drainer) rowsIn(from, to time.Time) int {
	n, _ := d.batchesIn(from, to)
	return n
}

// batchesIn sums the rows and the time spent inside the batches reported within
// [from, to].
func (d *drainer) batchesIn(from, to time.Time) (rows int, busy time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, b := range d.batches {
		if !b.at.Before(from) && !b.at.After(to) {
			rows += b.rows
			busy += b.took
		}
	}
	return rows, busy
}

func (d *drainer) drainedSweeps() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.drained
}

func (d *drainer) total() int { return d.rowsIn(time.Time{}, time.Now().Add(time.Hour)) }

func (d *drainer) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.failed) > 0 {
		return fmt.Errorf("the pass failed: %v", d.failed[0])
	}
	return nil
}

// reasons counts the PaceChanged events by reason.
func (d *drainer) reasons() map[pacing.Reason]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[pacing.Reason]int{}
	for _, c := range d.changes {
		out[c.Reason]++
	}
	return out
}

func (d *drainer) pace() *actors.PaceStatus {
	if st := d.rt.Status(); len(st.Passes) > 0 {
		return st.Passes[0].Pace
	}
	return nil
}

func (d *drainer) stop() { _ = d.rt.Stop(context.Background()) }

// withoutBusy is a pass's signals with the busy sessions reported as not shown, as on a
// database without a session list: the controller paces without that signal.
type withoutBusy struct{ passes.PaceSignals }

// BusySessions reports none.
func (withoutBusy) BusySessions(context.Context, passes.Pass) (int, bool, error) {
	return 0, false, nil
}
