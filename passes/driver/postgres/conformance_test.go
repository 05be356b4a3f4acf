package postgres_test

import (
	"testing"

	"github.com/retentionkit/retention/passes/passtest"
)

// TestConformance runs every table-pass and ledger behaviour on PostgreSQL
// (TEST_DATABASE_URL; skipped when unset, failed under CI=true).
func TestConformance(t *testing.T) { passtest.RunConformance(t, passtest.PostgresTarget()) }
