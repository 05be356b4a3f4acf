package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes"
	"github.com/retentionkit/retention/passes/dbtest"
)

// Opening through passes.Open with the PostgreSQL driver: the DSN forms a user writes
// reach the server, and a bad one is refused without its password.

// keyValueForm writes the test server's URL in libpq's key=value form, with password.
func keyValueForm(t *testing.T, password string) string {
	t.Helper()
	u, err := url.Parse(dbtest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	kv := fmt.Sprintf("host=%s port=%s user=%s dbname=%s password='%s'", u.Hostname(), u.Port(), u.User.Username(), strings.TrimPrefix(u.Path, "/"), password)
	if m := u.Query().Get("sslmode"); m != "" {
		kv += " sslmode=" + m
	}
	return kv
}

// withPassword is the test server's URL with a raw (not percent-encoded) password.
func withPassword(t *testing.T, password string) string {
	t.Helper()
	u := dbtest.PostgresURL()
	scheme, rest, _ := strings.Cut(u, "://")
	user, hostEtc, ok := strings.Cut(rest, "@")
	if !ok {
		t.Skip("TEST_DATABASE_URL has no user")
	}
	user, _, _ = strings.Cut(user, ":")
	return scheme + "://" + user + ":" + password + "@" + hostEtc
}

// Each of these DSNs panicked in the driver before. The server trusts local
// connections, so any password connects: what is tested is that the DSN is read.
func TestOpenPostgresDSNForms(t *testing.T) {
	dbtest.Postgres(t) // skips when the server is not there
	for _, dsn := range []string{
		keyValueForm(t, "a b#c"),
		withPassword(t, "pa ss"),
		withPassword(t, "pa#ss"),
		withPassword(t, "12#34"),
	} {
		db, err := passes.Open(context.Background(), passes.DriverPostgres, dsn)
		if err != nil {
			t.Fatalf("Open(%s): %v", passes.RedactDSNFor(passes.DriverPostgres, dsn), err)
		}
		var one int
		if err := db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("SELECT 1 = %d, %v", one, err)
		}
		db.Close()
	}
}

func TestOpenPostgresRefusesABadDSN(t *testing.T) {
	for _, dsn := range []string{
		keyValueForm(t, "s3cret-pw") + " connect_timeout=abc",
		withPassword(t, "s3cret-pw") + "&connect_timeout=abc",
	} {
		_, err := passes.Open(context.Background(), passes.DriverPostgres, dsn)
		if !errors.Is(err, passes.ErrBadDSN) || !strings.Contains(err.Error(), "connect_timeout") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open: %v; want ErrBadDSN naming connect_timeout, without the password", err)
		}
	}
}
