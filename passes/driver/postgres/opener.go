package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes/driver"
)

// Open connects to the PostgreSQL database dsn names (a URL or libpq's key=value pairs),
// with o's dialer and read timeout, and pings it. PostgreSQL never creates a database on
// connecting, so o.Existing changes nothing.
func (d Driver) Open(ctx context.Context, dsn string, o driver.OpenOptions) (*bun.DB, error) {
	var extra []pgdriver.Option
	if o.Dialer != nil {
		extra = append(extra, clusterDialer(*o.Dialer))
	}
	if o.NoReadTimeout {
		extra = append(extra, pgdriver.WithReadTimeout(0))
	}
	conn, err := postgresConnector(dsn, extra...)
	if err != nil {
		return nil, err
	}
	db := bun.NewDB(sql.OpenDB(conn), pgdialect.New())
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s database: %s", Name, d.RedactText(err.Error(), dsn))
	}
	return db, nil
}

// CheckDSN parses dsn (URL or key=value form) and checks its values without connecting.
func (Driver) CheckDSN(dsn string) error {
	_, err := postgresConnector(dsn)
	return err
}
