package harness

import (
	"context"
	"sync"
	"time"
)

// Sampler reads pg_locks and pg_stat_activity every PollEvery while a scenario runs:
// the most sessions granted one advisory key at once (more than one is a lock held
// twice), the most slots granted, and the most retention DELETE statements running at
// once.
type Sampler struct {
	db      *DB
	classes LockClasses
	cancel  context.CancelFunc
	done    chan struct{}

	mu      sync.Mutex
	figures SampleFigures
}

// SampleFigures are the extremes the sampler saw.
type SampleFigures struct {
	Samples       int
	Errors        int
	MaxHolders    int64 // sessions granted one advisory key at once
	MaxSlots      int64 // slot locks granted at once
	MaxDeletes    int64 // retention DELETEs active at once
	MaxPassLocks  int64 // pass locks granted at once
	MaxQueueWaits int64 // advisory locks waited for (not granted) at once
}

// StartSampler starts sampling until Stop.
func StartSampler(db *DB, classes LockClasses) *Sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sampler{db: db, classes: classes, cancel: cancel, done: make(chan struct{})}
	go s.run(ctx)
	return s
}

func (s *Sampler) run(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(PollEvery)
	defer tick.Stop()
	for {
		s.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sampleQuery reads one consistent-enough snapshot (pg_locks is read once per call).
// The DELETEs counted are the batches' only: the ledger's own (its tables start with
// retention_, the default prefix) run outside the delete slots by design, and a
// backlog sample's prune at a sweep's end beside three batches once counted as a
// fourth DELETE over a limit of three.
const sampleQuery = `WITH l AS (
		SELECT classid, objid, objsubid, granted, pid FROM pg_locks
		WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
	SELECT
		coalesce((SELECT max(c) FROM (SELECT count(*) AS c FROM l WHERE granted GROUP BY classid, objid, objsubid) s), 0),
		(SELECT count(*) FROM l WHERE granted AND classid = $1 AND objsubid = 2),
		(SELECT count(*) FROM l WHERE granted AND classid = $2 AND objsubid = 2),
		(SELECT count(*) FROM l WHERE NOT granted),
		(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active'
		   AND application_name LIKE 'retention:%' AND query ILIKE '%DELETE FROM%' AND query NOT ILIKE '%retention\_%')`

func (s *Sampler) sample(ctx context.Context) {
	var holders, slots, passLocks, waits, deletes int64
	q := sampleQuery
	if s.db.MySQL {
		q = sampleQueryMySQL
	}
	err := s.db.queryRow(ctx, q, s.classes.Slot, s.classes.Pass).Scan(&holders, &slots, &passLocks, &waits, &deletes)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.figures.Errors++
		}
		return
	}
	f := &s.figures
	f.Samples++
	f.MaxHolders = max(f.MaxHolders, holders)
	f.MaxSlots = max(f.MaxSlots, slots)
	f.MaxPassLocks = max(f.MaxPassLocks, passLocks)
	f.MaxQueueWaits = max(f.MaxQueueWaits, waits)
	f.MaxDeletes = max(f.MaxDeletes, deletes)
}

// Figures is what the sampler saw so far.
func (s *Sampler) Figures() SampleFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.figures
}

// Stop stops sampling and returns the figures.
func (s *Sampler) Stop() SampleFigures {
	s.cancel()
	<-s.done
	return s.Figures()
}
