package passes

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// The settings a PostgreSQL sweep puts on the connection it pins. They are session
// settings rather than SET LOCAL inside each batch's transaction, so a batch without
// children stays one statement in autocommit (one round trip) even with a statement
// timeout; Close puts them back before the connection returns to the pool, which the
// ledger and other passes share.

// pinSession reads the backend pid of c and applies the spec's session settings, in one
// round trip.
func (t *Table) pinSession(ctx context.Context, c bun.Conn) (pid int, err error) {
	sync := t.spec.SynchronousCommit
	if sync == "" {
		sync = DefaultSynchronousCommit
	}
	q := "SELECT pg_backend_pid(), set_config('synchronous_commit', ?, false)"
	args := []any{sync}
	if t.spec.StatementTimeout > 0 {
		q += ", set_config('statement_timeout', ?, false)"
		args = append(args, fmt.Sprint(statementTimeoutMillis(t.spec.StatementTimeout)))
	}
	var setSync, setTimeout string // set_config's results, not needed
	dst := []any{&pid, &setSync, &setTimeout}[:len(args)+1]
	if err := c.QueryRowContext(ctx, q, args...).Scan(dst...); err != nil {
		return 0, fmt.Errorf("pin the sweep connection: %w", err)
	}
	return pid, nil
}

// resetSession puts back what pinSession set.
func resetSession(c bun.Conn) error {
	_, err := c.ExecContext(context.Background(),
		"SELECT set_config(name, reset_val, false) FROM pg_settings WHERE name IN ('synchronous_commit', 'statement_timeout')")
	return err
}
