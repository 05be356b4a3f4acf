package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retentionkit/retention/passes"
)

// retentionEnv is retention with extra environment variables.
func retentionEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "retention.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noPanic fails when a command's output shows a panic or a Go type name.
func noPanic(t *testing.T, r result) {
	t.Helper()
	for _, bad := range []string{"panic", "goroutine ", "main.", "EOF", "out of memory", "interface {}", "decode:", "unmarshal", `pass ""`} {
		if strings.Contains(r.stdout+r.stderr, bad) {
			t.Fatalf("output holds %q:\n%s%s", bad, r.stdout, r.stderr)
		}
	}
}

// Every bad input of the issue: exit 2, a message naming the pass, the field and the line.
func TestBadConfigurationsExitTwoNamingTheLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	head := fmt.Sprintf("database:\n  driver: sqlite\n  dsn: %q\n", e.dsn)
	pass := "passes:\n  - name: events\n    table: " + e.prefix + "audit_log\n    key: id\n    timestamp: occurred_at\n    timestamp_format: unix\n"
	tests := []struct {
		name, body string
		env        []string
		want       []string
	}{
		{"retention that overflowed to 25 minutes", head + pass + "    retention_period: 213504d\n", nil,
			[]string{"line 10", `pass "events"`, "retention_period", `"213504d"`, "maximum"}},
		{"retention that overflowed negative", head + pass + "    retention_period: 106752d\n", nil,
			[]string{"line 10", `pass "events"`, "retention_period", `"106752d"`}},
		{"huge hours", head + pass + "    retention_period: 1d\n    batch_delay: 9999999999h\n", nil,
			[]string{"line 11", `pass "events"`, "batch_delay", `"9999999999h"`}},
		{"unknown field", head + pass + "    retention_period: 1d\n    batchsize: 10\n", nil,
			[]string{"line 11", `pass "events"`, `"batchsize"`, "did you mean batch_size?"}},
		{"empty file", "", nil, []string{"empty"}},
		{"comments only", "# to do\n", nil, []string{"empty", "comments"}},
		{"unset variable", head + pass + "    retention_period: ${RETENTION}\n", nil,
			[]string{"line 10", `pass "events"`, "retention_period", "RETENTION is not set"}},
		{"fractional batch size", head + pass + "    retention_period: 1d\n    batch_size: 1.5\n", nil,
			[]string{`line 11: pass "events": batch_size: want a whole number, got "1.5"`}},
		{"fractional concurrency", head + "node:\n  max_concurrent_deletes: 1.5\n", nil,
			[]string{`line 5: node.max_concurrent_deletes: want a whole number, got "1.5"`}},
		{"statement timeout under 1ms", head + pass + "    retention_period: 1d\n    statement_timeout: 500us\n", nil,
			[]string{`line 11: pass "events": statement_timeout must be 0 (no timeout) or at least 1ms`}},
		{"key given a mapping", head + "passes:\n  - name: events\n    key: {a: b}\n", nil,
			[]string{`line 6: pass "events": key: want a column name or a list of column names, got a mapping`}},
		{"field given twice", head + pass + "    retention_period: 1d\n    retention_period: 2d\n", nil,
			[]string{`line 11: pass "events": retention_period is given twice (first at line 10)`}},
		{"pass without a name", head + pass + "    retention_period: 1d\n  - table: x\n    key: id\n    timestamp: ts\n", nil,
			[]string{`line 11: passes[1]: name must not be empty`}},
		{"bad connect_timeout", "database:\n  driver: postgres\n  dsn: \"host=127.0.0.1 user=app password=s3cret-pw connect_timeout=abc\"\n", nil,
			[]string{"line 3", "database.dsn", "connect_timeout"}},
		{"bad connect_timeout from the environment", "database:\n  driver: postgres\n  dsn: ${DB_URL}\n", []string{"DB_URL=postgres://app:s3cret-pw@127.0.0.1/app?connect_timeout=abc"},
			[]string{"line 3", "database.dsn", "connect_timeout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := retentionEnv(t, tc.env, "validate", "--config", writeConfig(t, tc.body))
			noPanic(t, r)
			if r.code != 2 || strings.Contains(r.stderr, "s3cret") {
				t.Fatalf("exit %d, stderr %q; want exit 2 without the password", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not say %q", r.stderr, w)
				}
			}
		})
	}
}

func TestUnknownLogFormatExitsTwo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	r := retention(t, "validate", "--config", e.config("", ""), "--log-format", "xml")
	if r.code != 2 || !strings.Contains(r.stderr, "--log-format") || !strings.Contains(r.stderr, `"xml"`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r := retention(t, "validate", "--config", e.config("", ""), "--log-format", "json"); r.code != 0 {
		t.Fatalf("json: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestValidateNeverCreatesTheSQLiteFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.db")
	r := retention(t, "validate", "--config", writeConfig(t, fmt.Sprintf("database:\n  driver: sqlite\n  dsn: %q\npasses: []\n", path)))
	noPanic(t, r)
	if r.code != 2 || !strings.Contains(r.stderr, "does not exist") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("validate created %s (%v)", path, err)
	}
}

// Before: "unable to open database file: out of memory (14)".
func TestAMissingSQLiteDirectoryIsNamed(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "no-such-dir")
	path := writeConfig(t, fmt.Sprintf("database:\n  driver: sqlite\n  dsn: %q\npasses: []\n", filepath.Join(dir, "app.db")))
	for _, cmd := range []string{"validate", "migrate", "run"} {
		r := retention(t, cmd, "--config", path)
		noPanic(t, r)
		if r.code != 2 || !strings.Contains(r.stderr, dir) || !strings.Contains(r.stderr, "does not exist") {
			t.Fatalf("%s: exit %d, stderr %q", cmd, r.code, r.stderr)
		}
	}
}

// Before: the space case panicked printing the password; ?password= and key=value
// passwords were printed in clear.
func TestNoDSNFormShowsItsPassword(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://app:hunter2 secret@127.0.0.1:1/app?sslmode=disable",
		"postgres://app:hunter2#secret@127.0.0.1:1/app?sslmode=disable",
		"postgres://app@127.0.0.1:1/app?password=hunter2secret&sslmode=disable",
		"host=127.0.0.1 port=1 user=app password=hunter2secret dbname=app sslmode=disable",
		"host=127.0.0.1 port=1 user=app password='hunter2 secret' dbname=app sslmode=disable",
	} {
		for _, cmd := range []string{"validate", "status", "sweep"} {
			r := retention(t, cmd, "--config", writeConfig(t, fmt.Sprintf("database:\n  driver: postgres\n  dsn: %q\npasses: []\n", dsn)))
			noPanic(t, r)
			if r.code != 1 || strings.Contains(r.stdout+r.stderr, "hunter2") || !strings.Contains(r.stderr, "xxxxx") || !strings.Contains(r.stderr, "127.0.0.1") {
				t.Fatalf("%s with %q: exit %d, output:\n%s%s", cmd, dsn, r.code, r.stdout, r.stderr)
			}
		}
	}
}

// Before: ${VAR} was replaced in the raw text, so " #" in the value began a YAML
// comment and the DSN was cut short.
func TestAVariableWithAHashSurvives(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	link := filepath.Join(t.TempDir(), "data #1")
	if err := os.Symlink(e.dir, link); err != nil {
		t.Fatal(err)
	}
	path := e.config("", "")
	e.edit(path, fmt.Sprintf("dsn: %q", e.dsn), "dsn: ${APP_DB}")
	r := retentionEnv(t, []string{"APP_DB=" + filepath.Join(link, "app.db")}, "validate", "--config", path)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = retentionEnv(t, []string{"APP_DB="}, "validate", "--config", path)
	if r.code != 2 || !strings.Contains(r.stderr, "database.dsn") {
		t.Fatalf("with APP_DB empty: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A set_null child whose foreign key column is NOT NULL could never be cleared, so
// every sweep would fail its parents: validate refuses it, exit 2, naming the pass, the
// child table and the column.
func TestSetNullOnANotNullForeignKeyExitsTwo(t *testing.T) {
	t.Parallel()
	eachDriver(t, func(t *testing.T, e *env) {
		path := e.config("", "")
		e.edit(path, "on_delete: block", "on_delete: set_null")
		r := retention(t, "validate", "--config", path)
		noPanic(t, r)
		want := fmt.Sprintf(`pass "audit-log": child table %slegal_hold has on_delete: set_null, but %slegal_hold.audit_log_id is NOT NULL`, e.prefix, e.prefix)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Fatalf("exit %d, stderr %q; want exit 2 saying %q", r.code, r.stderr, want)
		}
	})
}
