package ledger

import (
	"fmt"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/driver"
)

// driverOf returns the driver of the handle the ledger lives in: the ledger asks it for
// everything that differs by database and never tests the dialect itself.
func driverOf(db bun.IDB) (driver.Driver, error) {
	d, err := passes.DriverFor(db)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return d, nil
}

// ledgerTypes are the column types a migration writes on db's database.
func ledgerTypes(db bun.IDB) (driver.LedgerTypes, error) {
	d, err := driverOf(db)
	if err != nil {
		return driver.LedgerTypes{}, err
	}
	return d.LedgerTypes(), nil
}
