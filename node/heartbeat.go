package node

import (
	"context"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/actors"
	"github.com/retentionkit/retention/node/config"
	"github.com/retentionkit/retention/passes/ledger"
)

// MigrateLedger creates or upgrades cfg's ledger tables on db and logs what it did,
// unless `ledger.migrate: false` leaves that to the `migrate` command. The caller checks
// that the ledger is on. Open runs it before the node joins the ledger, whose heartbeat
// needs the tables; `sweep` runs it too.
func MigrateLedger(ctx context.Context, log *logrus.Logger, db *bun.DB, cfg *config.Config) error {
	if !cfg.LedgerMigrate() {
		return nil
	}
	m, err := ledger.MigrateTables(ctx, db, cfg.LedgerPrefix())
	if msg := "upgraded the ledger tables"; len(m.Applied) > 0 {
		if len(m.Created) > 0 {
			msg = "created the ledger tables in the database"
		}
		log.WithFields(logrus.Fields{"tables": strings.Join(m.Created, " "), "migrations": strings.Join(m.Applied, " ")}).Info(msg)
	}
	return err
}

// JoinLedger makes this process a node of l: a row with id (a fresh one when id is
// empty; in cluster mode the member's), a heartbeat every ledger.DefaultHeartbeatInterval
// until stop is called, and the returned ledger writes that id on every run, so a node
// that dies leaves runs the others can close as abandoned.
func JoinLedger(ctx context.Context, log *logrus.Logger, l *ledger.Ledger, id string) (joined *ledger.Ledger, stop context.CancelFunc, err error) {
	self := ledger.NewNode(time.Now())
	if id != "" {
		self.ID = id
	}
	if err := l.Heartbeat(ctx, self, self.Started); err != nil {
		return nil, nil, err
	}
	joined = l.ForNode(self.ID)
	hbCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&ledger.NodeHeartbeat{Ledger: joined, Node: self, Reporter: actors.LogPollReporter{Logger: log, What: "node heartbeat"}}).Run(hbCtx)
	}()
	log.WithFields(logrus.Fields{"node": self.ID, "host": self.Host, "pid": self.PID}).Info("node joined the ledger")
	return joined, func() { cancel(); <-done }, nil
}
