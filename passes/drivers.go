package passes

import (
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/retentionkit/retention/passes/driver"
	"github.com/retentionkit/retention/passes/driver/mysql"
	"github.com/retentionkit/retention/passes/driver/postgres"
	"github.com/retentionkit/retention/passes/driver/sqlite"
)

// Drivers are the databases retention knows, in the order messages list them. It is a
// function, not a variable, so no caller can change the set another one sees.
func Drivers() []driver.Driver {
	return []driver.Driver{postgres.Driver{}, sqlite.Driver{}, mysql.Driver{}}
}

// DriverNamed returns the driver a config's database.driver value names.
func DriverNamed(name string) (driver.Driver, error) {
	var names []string
	for _, d := range Drivers() {
		if d.Name() == name {
			return d, nil
		}
		names = append(names, fmt.Sprintf("%q", d.Name()))
	}
	return nil, fmt.Errorf("database driver %q: want one of %s", name, strings.Join(names, ", "))
}

// DriverFor returns the driver of an open handle: the one that owns its dialect. It is the
// only place a handle's database is worked out; everything after asks the driver.
func DriverFor(db bun.IDB) (driver.Driver, error) {
	for _, d := range Drivers() {
		if d.Owns(db) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("no retention driver for the %s dialect", db.Dialect().Name())
}
