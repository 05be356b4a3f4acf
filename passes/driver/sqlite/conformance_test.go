package sqlite_test

import (
	"testing"

	"github.com/retentionkit/retention/passes/passtest"
)

// TestConformance runs every table-pass and ledger behaviour on SQLite.
func TestConformance(t *testing.T) { passtest.RunConformance(t, passtest.SQLiteTarget()) }
