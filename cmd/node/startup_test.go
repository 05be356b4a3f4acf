package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	rnode "github.com/retentionkit/retention/node"
	"github.com/retentionkit/retention/passes"
)

// TestStartupChecksOnALockedTableGiveUpAsDatabaseUnavailable holds the pass's table under
// an ACCESS EXCLUSIVE lock for longer than the retry bound: the checks time out round
// after round, and the node gives up with "database unavailable" (exit 1), not a
// configuration error (exit 2). Not parallel: its rounds are counted against a deadline,
// which a crowded machine stretches.
func TestStartupChecksOnALockedTableGiveUpAsDatabaseUnavailable(t *testing.T) {
	e := newEnv(t, passes.DriverPostgres)
	ctx := context.Background()
	var logs bytes.Buffer
	log := logrus.New()
	log.SetOutput(&logs)
	n, err := openNode(ctx, e.config("", ""), log, true)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	n.startup = rnode.StartupOptions{Retry: 2 * time.Second, Attempt: 200 * time.Millisecond}
	holder, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.ExecContext(ctx, "LOCK TABLE "+e.prefix+"audit_log IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	err = n.startupValidate(ctx)
	var ce *configError
	if !errors.Is(err, rnode.ErrDatabaseUnavailable) || errors.As(err, &ce) || !strings.Contains(err.Error(), `pass "audit-log"`) {
		t.Fatalf("startupValidate = %v, want database unavailable naming the pass, not a configuration error", err)
	}
	if retries := strings.Count(logs.String(), "database unavailable during the startup checks; retrying"); retries < 2 {
		t.Fatalf("%d retries logged, want at least 2:\n%s", retries, logs.String())
	}

	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := n.startupValidate(ctx); err != nil {
		t.Fatalf("once the lock is gone: %v", err)
	}
}

// TestAMissingTableAtStartupIsAConfigurationErrorAtOnce: nothing to retry.
func TestAMissingTableAtStartupIsAConfigurationErrorAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverPostgres)
	path := e.config("", "")
	e.edit(path, "table: "+e.prefix+"audit_log", "table: "+e.prefix+"no_such_table")
	var logs bytes.Buffer
	log := logrus.New()
	log.SetOutput(&logs)
	n, err := openNode(context.Background(), path, log, true)
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	err = n.startupValidate(context.Background())
	var ce *configError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "no_such_table") || strings.Contains(logs.String(), "retrying") {
		t.Fatalf("startupValidate = %v (logs %q), want a configuration error naming the table, without a retry", err, logs.String())
	}
}
