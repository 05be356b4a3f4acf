package passes

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
)

// pinSession has the driver apply the spec's session settings to a sweep's pinned
// connection c and returns its backend. They are session settings so that a batch
// without children stays one statement even with a statement timeout; Close has the
// driver put them back before the connection returns to the pool, which the ledger and
// other passes share.
func (t *Table) pinSession(ctx context.Context, c bun.Conn) (int, error) {
	sync := t.spec.SynchronousCommit
	if sync == "" {
		sync = DefaultSynchronousCommit
	}
	return t.drv.PinSession(ctx, c, driver.Session{SynchronousCommit: sync, StatementTimeout: t.spec.StatementTimeout})
}
