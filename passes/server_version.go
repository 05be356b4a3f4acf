package passes

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// PostgresVersionNum returns the PostgreSQL server's version as server_version_num
// reads it (150020 for 15.20), so a caller can refuse a feature an older server lacks;
// cluster mode needs 14 (client_connection_check_interval). It fails on another
// database.
func PostgresVersionNum(ctx context.Context, db bun.IDB) (int, error) {
	if !isPostgres(db) {
		return 0, fmt.Errorf("not a PostgreSQL database")
	}
	var n int
	if err := db.NewRaw("SELECT current_setting('server_version_num')::int").Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("read the server version: %w", err)
	}
	return n, nil
}
