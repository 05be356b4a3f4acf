package node

import (
	"time"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/ledger"
)

// TablePasses builds cfg's table passes on db, in the file's order. With a ledger (l not
// nil), rows whose delete fails on their own wait in its quarantine, warn hears what
// the quarantine warns of, and each partition retirement is journaled in it before the
// partition is detached. It is the one place a table pass is built, for Open and for
// the commands that open a node without running it.
func TablePasses(cfg *config.Config, db *bun.DB, l *ledger.Ledger, warn func(string)) ([]Pass, error) {
	var j *ledger.PartitionJournal
	if l != nil {
		j = l.PartitionJournal()
	}
	return tablePasses(cfg, db, l, j, nil, warn)
}

// tablePasses is TablePasses with the partition journal given (not nil when l is not),
// so that Open can name the node in it once the node has joined the ledger, and the
// open replicas whose lag paces the adaptive passes (OpenReplicas).
func tablePasses(cfg *config.Config, db *bun.DB, l *ledger.Ledger, j *ledger.PartitionJournal, replicas []passes.Replica, warn func(string)) ([]Pass, error) {
	built, err := cfg.TablePasses()
	if err != nil {
		return nil, err
	}
	out := make([]Pass, 0, len(built))
	for _, p := range built {
		tbl, err := passes.NewTable(db, p.Name, p.Spec)
		if err != nil {
			return nil, err
		}
		if tbl, err = tbl.WithReplicas(replicas); err != nil {
			return nil, err
		}
		if l != nil {
			q := l.Quarantine(map[string]time.Duration{p.Name: p.Options.EffectiveInterval()})
			tbl = tbl.WithQuarantine(q.WithWarnings(warn))
			// Every partition a pass retires is journaled in the ledger, committed
			// before the detach; a pass without partitions: never writes to it.
			tbl = tbl.WithPartitionJournal(j)
		}
		out = append(out, TablePass(tbl, p.Options))
	}
	return out, nil
}
