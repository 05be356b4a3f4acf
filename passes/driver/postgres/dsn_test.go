package postgres

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/retentionkit/retention/passes/driver"
)

// Each of these panicked inside the driver (and the first printed its password).
func TestPostgresDSNForms(t *testing.T) {
	tests := []struct {
		name, dsn                      string
		addr, user, password, database string
	}{
		{"url", "postgres://app:pw@db.example.com:6432/appdb?sslmode=disable", "db.example.com:6432", "app", "pw", "appdb"},
		{"url, default port", "postgresql://app:pw@db/appdb", "db:5432", "app", "pw", "appdb"},
		{"url, password with a space", "postgres://app:pa ss@db/appdb", "db:5432", "app", "pa ss", "appdb"},
		{"url, password with #", "postgres://app:pa#ss@db/appdb", "db:5432", "app", "pa#ss", "appdb"},
		{"url, password 12#34 (looked like a port)", "postgres://app:12#34@db/appdb", "db:5432", "app", "12#34", "appdb"},
		{"url, password with @ / ? :", "postgres://app:p@s/s?w:d@db/appdb", "db:5432", "app", "p@s/s?w:d", "appdb"},
		{"url, percent-encoded", "postgres://app:p%40ss%20w@db/app%2Fdb", "db:5432", "app", "p@ss w", "app/db"},
		{"url, a raw %", "postgres://app:100%@db/appdb", "db:5432", "app", "100%", "appdb"},
		{"url, password as a parameter", "postgres://app@db/appdb?password=q%26p&sslmode=disable", "db:5432", "app", "q&p", "appdb"},
		{"url, ipv6", "postgres://app:pw@[::1]:5433/appdb", "[::1]:5433", "app", "pw", "appdb"},
		{"url, @ in a parameter", "postgres://db/appdb?application_name=a@b", "db:5432", "postgres", "", "appdb"},
		{"key=value", "host=db port=6432 user=app password=pw dbname=appdb sslmode=disable", "db:6432", "app", "pw", "appdb"},
		{"key=value, quoted", `host=db user=app password='a b#c \' \\' dbname = appdb`, "db:5432", "app", `a b#c ' \`, "appdb"},
		{"key=value, escaped space", `host=db user=app password=a\ b dbname=appdb`, "db:5432", "app", "a b", "appdb"},
		{"key=value, empty password", `host=db user=app password='' dbname=appdb`, "db:5432", "app", "", "appdb"},
		{"key=value, numeric timeout", "host=db user=app connect_timeout=10", "db:5432", "app", "", "postgres"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGUSER", "")
			t.Setenv("PGDATABASE", "")
			conn, err := postgresConnector(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			c := conn.Config()
			if c.Addr != tc.addr || c.User != tc.user || c.Password != tc.password || c.Database != tc.database {
				t.Fatalf("addr %q user %q password %q database %q; want %q %q %q %q", c.Addr, c.User, c.Password, c.Database, tc.addr, tc.user, tc.password, tc.database)
			}
		})
	}
}

func TestPostgresDSNTimeoutsAndSockets(t *testing.T) {
	conn, err := postgresConnector("host=/var/run/postgresql port=5433 user=app connect_timeout=7")
	if err != nil {
		t.Fatal(err)
	}
	c := conn.Config()
	if c.Network != "unix" || c.Addr != "/var/run/postgresql/.s.PGSQL.5433" || c.DialTimeout.Seconds() != 7 {
		t.Fatalf("network %q addr %q dial timeout %v", c.Network, c.Addr, c.DialTimeout)
	}
}

func TestPostgresDSNRefusals(t *testing.T) {
	const pw = "S3cretPw"
	tests := []struct{ dsn, want string }{
		{"postgres://app:" + pw + "@db/app?connect_timeout=abc", "connect_timeout"},
		{"host=db user=app password=" + pw + " connect_timeout=abc", "connect_timeout"},
		{"postgres://app:" + pw + "@db/app?sslmode=sometimes", "sslmode"},
		{"postgres://app:" + pw + "@db:port/app", "port"},
		{"postgres://app:" + pw + "@db:99999/app", "port"},
		{"postgres://app:" + pw, "port"},
		{"postgres://app:" + pw + "@h1,h2/app", "several hosts"},
		{"host=h1,h2 password=" + pw, "several hosts"},
		{"host=db password='" + pw, "no closing quote"},
		{"host=db password=my " + pw + " dbname=app", "not key=value"},
		{"host=db password=" + pw + " options=-csearch_path=x", "options is not supported"},
		{"host=db password=" + pw + " =x", "not key=value"},
		{"postgres://app:" + pw + "@db/app?&=x", "has no name"},
		{"postgres://app:" + pw + "@db/app?bad%20name=x", "parameter name"},
		{"postgres://app:" + pw + "@db/app?sslmode=verify-full&sslrootcert=/does/not/exist", "root CA"},
		{"mysql://app:" + pw + "@db/app", "postgres://"},
		{"   ", "empty"},
		{"just-a-word", "want a postgres:// or postgresql:// URL"},
		{"127.0.0.1:5432", "want a postgres:// or postgresql:// URL"},
	}
	for _, tc := range tests {
		_, err := postgresConnector(tc.dsn)
		if err == nil {
			t.Errorf("%q: accepted", tc.dsn)
			continue
		}
		if !errors.Is(err, driver.ErrBadDSN) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), pw) {
			t.Errorf("%q: %v; want an driver.ErrBadDSN about %q without the password", tc.dsn, err, tc.want)
		}
	}
}

// Before: RedactDSN-like code hid only user info; a ?password= parameter and the
// key=value form were printed in clear.
func TestRedactDSN(t *testing.T) {
	const pw = "S3cretPw"
	tests := []struct{ dsn, want string }{
		{"postgres://app:" + pw + "@db:5432/app?sslmode=disable", "postgres://app:xxxxx@db:5432/app?sslmode=disable"},
		{"postgres://app@db/app?password=" + pw + "&sslmode=disable", "postgres://app:xxxxx@db/app?sslmode=disable"},
		{"postgres://app:pa ss" + pw + "@db/app", "postgres://app:xxxxx@db/app"},
		{"postgres://app:" + pw + "#x@db/app", "postgres://app:xxxxx@db/app"},
		{"postgres://app@db/app", "postgres://app@db/app"},
		{"postgres://app:" + pw + "@db:port/app", unparsedDSN},
		{"host=db user=app password=" + pw + " dbname=app", "host=db user=app password=xxxxx dbname=app"},
		{"host=db user=app password='a " + pw + "' application_name='my app'", "host=db user=app password=xxxxx application_name='my app'"},
		{"host=db password='" + pw, unparsedDSN},
	}
	for _, tc := range tests {
		if got := (Driver{}).RedactDSN(tc.dsn); got != tc.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

func TestRedactText(t *testing.T) {
	const pw = "p@ss w#rd"
	for _, dsn := range []string{
		"postgres://app:" + pw + "@db/app",
		"postgres://app:" + url.PathEscape(pw) + "@db/app",
		"postgres://app@db/app?password=" + url.PathEscape(pw),
		"host=db password='" + pw + "'",
		"host=db password='" + pw, // does not parse: what was read is still removed
	} {
		text := "failed: " + pw + " / " + url.QueryEscape(pw) + " / " + url.PathEscape(pw) + " / " + url.UserPassword("", pw).String()
		if got := (Driver{}).RedactText(text, dsn); strings.Contains(got, "w#rd") || strings.Contains(got, "w%23rd") || !strings.Contains(got, driver.Redacted) {
			t.Errorf("RedactText(%q) = %q", dsn, got)
		}
	}
}

func FuzzPostgresDSN(f *testing.F) {
	for _, s := range []string{
		"postgres://app:pa ss@db/app", "postgres://app:pa#ss@db/app", "postgres://app:12#34@db/app",
		"host=db user=app password='a b' connect_timeout=abc", "postgres://app@db/app?password=x&connect_timeout=abc",
		"postgres://[::1", "postgres://a:b@[::1]:x/db", "host='", `host=\`, "postgres://%zz@db/%", "postgres://:@:/?=&",
		"postgres://app:pw@db/app?sslmode=verify-ca&sslrootcert=/nonexistent",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		c, err := parsePostgresDSN(dsn)
		if _, cerr := postgresConnector(dsn); (err == nil) != (cerr == nil) && err != nil {
			t.Fatalf("parse %v, connector %v", err, cerr)
		}
		// A password long and odd enough not to be a piece of the rest never shows. One
		// whose text stands elsewhere in the DSN too (a host of the same digits), or in
		// how the rest is shown (a host byte 0xB0 escaped as %B0 before seven zeros),
		// may show there: that is the host, not the password.
		rest := strings.Replace(dsn, c.password, "", 1)
		elsewhere := strings.Contains(rest, c.password) || strings.Contains((Driver{}).RedactDSN(rest), c.password)
		if shown := (Driver{}).RedactDSN(dsn); err == nil && !elsewhere && len(c.password) >= 8 && !strings.ContainsAny(c.password, "/:@?&=.") && strings.Contains(shown, c.password) {
			t.Fatalf("RedactDSN(%q) = %q shows the password %q", dsn, shown, c.password)
		}
		_ = (Driver{}).RedactText("x "+dsn, dsn)
	})
}

// FuzzDSNPassword writes one password every way a user might and checks that it is
// read back exactly (where the form allows) and never shown.
func FuzzDSNPassword(f *testing.F) {
	for _, s := range []string{"hunter22", "pa ss#word", "12#34", "p@s/s?w:d", "a'b\\c", "100%", "%41%42%43%44", "é✓ ü"} {
		f.Add(s)
	}
	type form struct {
		dsn   string
		exact bool // the form must read the password back exactly
	}
	formsOf := func(pw string) []form {
		quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
		return []form{
			{"postgres://app:" + url.PathEscape(pw) + "@db.example.com:5432/appdb?sslmode=disable", true},
			{"postgres://app@db.example.com/appdb?password=" + url.QueryEscape(pw), false},
			{"host=db.example.com user=app password=" + quoted + " dbname=appdb", true},
			{"postgres://app:" + pw + "@db.example.com:5432/appdb", false},
		}
	}
	// The redactions of the same forms with another password: a pw that shows in them is
	// a piece of the DSN's own text ("ssword" of the key "password"), not a leak.
	var fixed []string
	for _, form := range formsOf("q7Z9q7Z9") {
		fixed = append(fixed, (Driver{}).RedactDSN(form.dsn))
	}
	f.Fuzz(func(t *testing.T, pw string) {
		if len(pw) < 6 || strings.ContainsAny(pw, "\x00") || strings.Contains("xxxxx", pw) {
			return
		}
		for i, form := range formsOf(pw) {
			template := strings.ReplaceAll(form.dsn, pw, "")
			if strings.Contains(template, pw) || strings.Contains(unparsedDSN, pw) || strings.Contains(fixed[i], pw) {
				continue
			}
			conn, err := postgresConnector(form.dsn)
			if err != nil {
				if strings.Contains(err.Error(), pw) {
					t.Fatalf("%q: error shows the password: %v", form.dsn, err)
				}
			} else if form.exact && conn.Config().Password != pw {
				t.Fatalf("%q: password read as %q, want %q", form.dsn, conn.Config().Password, pw)
			}
			if shown := (Driver{}).RedactDSN(form.dsn); strings.Contains(shown, pw) {
				t.Fatalf("RedactDSN(%q) = %q shows the password", form.dsn, shown)
			}
		}
	})
}
