package config

import (
	"strings"
	"testing"
)

// env is a fixed environment for the loader.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

const goodHead = `database:
  driver: postgres
  dsn: postgres://app@127.0.0.1/app
`

func TestParseConfigRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       []string
	}{
		{"unknown pass field", goodHead + "passes:\n  - name: events\n    batchsize: 10\n",
			[]string{"line 6", `pass "events"`, `unknown field "batchsize"`, "did you mean batch_size?"}},
		{"unknown field of an unnamed pass", goodHead + "passes:\n  - table: t\n    retention_perod: 1d\n",
			[]string{"line 6", "passes[0]", "did you mean retention_period?"}},
		{"unknown section", goodHead + "ledgr:\n  enabled: false\n", []string{"line 4", `unknown field "ledgr"`, "did you mean ledger?"}},
		{"unknown field far from any", goodHead + "node:\n  zzzzzzzz: 1\n", []string{"line 5", "node", "valid fields: admin, admin_token"}},
		{"unknown child field", goodHead + "passes:\n  - name: e\n    children:\n      - { table: c, foreign_kee: e_id }\n",
			[]string{"line 7", `pass "e": children[0]`, "did you mean foreign_key?"}},
		{"overflowing retention", goodHead + "passes:\n  - name: events\n    retention_period: 213504d\n",
			[]string{"line 6", `pass "events": retention_period`, `"213504d"`, "maximum of 36500d"}},
		{"negative overflow", goodHead + "passes:\n  - name: events\n    retention_period: 106752d\n",
			[]string{"line 6", `pass "events": retention_period`, `"106752d"`}},
		{"bad batch delay", goodHead + "passes:\n  - name: events\n    batch_delay: 5 minutes\n",
			[]string{"line 6", `pass "events": batch_delay`, `"5 minutes"`}},
		{"bad section duration", goodHead + "node:\n  shutdown_grace: 30\n", []string{"line 5", "node.shutdown_grace", `"30"`, "without a unit"}},
		{"bad cleanup duration", goodHead + "metadata_cleanup:\n  names:\n    - { name: x, retention_period: 1y }\n",
			[]string{"line 6", "metadata_cleanup.names[0].retention_period", `"1y"`}},
		{"duration given a list", goodHead + "passes:\n  - name: events\n    retention_period: [1d]\n", []string{"line 6", "want a duration", "got a list"}},
		{"number given text", goodHead + "passes:\n  - name: events\n    batch_size: lots\n", []string{"line 6", `pass "events": batch_size`, "want a whole number", `"lots"`}},
		{"list given a mapping", goodHead + "passes:\n  name: events\n", []string{"line 5", "passes", "want a list, got a mapping"}},
		{"bool given text", goodHead + "ledger:\n  enabled: maybe\n", []string{"line 5", "ledger.enabled", "true or false"}},
		{"empty file", "", []string{"empty"}},
		{"blank file", "\n\n   \n", []string{"empty"}},
		{"comments only", "# retention\n# nothing yet\n", []string{"empty", "only comments"}},
		{"document marker only", "---\n", []string{"empty"}},
		{"two documents", goodHead + "---\npasses: []\n", []string{"line 4", "second YAML document"}},
		{"a list at the top", "- a\n- b\n", []string{"line 1", "want a mapping of sections"}},
		{"unset variable", "database:\n  driver: postgres\n  dsn: postgres://app:${DB_PASSWORD}@db/app\n",
			[]string{"line 3", "database.dsn", "DB_PASSWORD is not set", "${DB_PASSWORD:-"}},
		{"unclosed variable", "database:\n  dsn: ${DB\n", []string{"line 2", "database.dsn", "no closing"}},
		{"bad variable name", "database:\n  dsn: ${1X}\n", []string{"line 2", "must name an environment variable"}},
		{"unset variable in a pass", goodHead + "passes:\n  - name: events\n    table: ${TABLE}\n", []string{"line 6", `pass "events": table`, "TABLE is not set"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tc.body), envOf(nil))
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			for _, never := range []string{"main.", "EOF", "!!", "[]main", "*main"} {
				if strings.Contains(msg, never) {
					t.Errorf("error %q holds %q", msg, never)
				}
			}
		})
	}
}

// Before: ${VAR} was replaced in the raw text, so a '#' cut the value short (the prefix
// then authenticated), ': ' broke the file, and an unset variable became empty.
func TestParseConfigExpandsVariablesInsideValues(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{
		"DB_PASSWORD": "pa#ss: w0rd",
		"BATCH":       "250",
		"EMPTY":       "",
		"TABLE":       "events",
	})
	body := `database:
  driver: postgres
  dsn: postgres://app:${DB_PASSWORD}@db/app # a comment
passes:
  - name: ${TABLE}-pass
    table: ${TABLE}
    batch_size: ${BATCH}
    where: "state = '${STATE:-done}'"
    timestamp: ${EMPTY:-created_at}
    key: "$${literal}"
`
	c, err := parseConfig([]byte(body), env)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Passes[0]
	checks := []struct{ got, want string }{
		{c.Database.DSN, "postgres://app:pa#ss: w0rd@db/app"},
		{p.Name, "events-pass"},
		{p.Table, "events"},
		{p.Where, "state = 'done'"},
		{p.Timestamp, "created_at"},
		{strings.Join(p.Key, ","), "${literal}"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("got %q, want %q", ch.got, ch.want)
		}
	}
	if p.BatchSize == nil || *p.BatchSize != 250 {
		t.Errorf("batch_size = %v, want 250 (a plain ${VAR} takes its value's type)", p.BatchSize)
	}
}

// A value from the environment that does not fit its field is reported as the file
// wrote it, so a secret never shows; nor does an expanded value in any other error.
func TestParseConfigNeverShowsAnExpandedValue(t *testing.T) {
	t.Parallel()
	env := envOf(map[string]string{"SECRET": "hunter2-topsecret"})
	for _, body := range []string{
		goodHead + "passes:\n  - name: x\n    batch_size: ${SECRET}\n",
		goodHead + "passes:\n  - name: x\n    retention_period: ${SECRET}\n",
		goodHead + "ledger:\n  enabled: ${SECRET}\n",
	} {
		_, err := parseConfig([]byte(body), env)
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "${SECRET}") {
			t.Errorf("error %v: want it to name ${SECRET} without its value", err)
		}
	}
}

func TestParseConfigRecordsLinesForValidate(t *testing.T) {
	t.Parallel()
	body := goodHead + `passes:
  - name: events
    table: events
    key: id
    timestamp: ts
    retention_period: 30d
    batch_size: 0
    children:
      - { table: c, foreign_key: "bad name", on_delete: block }
`
	c, err := parseConfig([]byte(body), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	msg := c.Validate().Error()
	for _, w := range []string{`line 10: pass "events": batch_size`, `line 12: pass "events": children[0].foreign_key`} {
		if !strings.Contains(msg, w) {
			t.Errorf("Validate: %q does not say %q", msg, w)
		}
	}
}

func TestValidateChecksTheDSN(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{
		"postgres://app:s3cr3t-pw@db/app?connect_timeout=abc",
		"host=db user=app password=s3cr3t-pw connect_timeout=abc",
		"host=db password='s3cr3t-pw",
		"postgres://app:s3cr3t-pw@db:port/app",
		"postgres://app:s3cr3t-pw@db/app?sslmode=sometimes",
	} {
		body := "database:\n  driver: postgres\n  dsn: \"" + dsn + "\"\n"
		c, err := parseConfig([]byte(body), envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), "line 3: database.dsn") || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Validate(%q) = %v; want a line-3 database.dsn error without the password", dsn, err)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"", "# c\n", "---\n", "- a\n", goodHead,
		goodHead + "passes:\n  - name: e\n    retention_period: 213504d\n    batchsize: 1\n",
		"database:\n  dsn: postgres://app:${PW}@db/app\n  driver: ${D:-postgres}\n",
		"a: &x {b: *x}\n", "passes: &p [*p]\n", "node: {<<: {admin: x}}\n", "database: {dsn: ${X\n",
		"passes:\n  - {name: a, filter: {column: s, in: [done, null]}}\n",
		"passes:\n  - {name: a, batch_size: 1.5, key: [[a], {b: c}], statement_timeout: 500us}\n",
		"passes:\n  - {name: a, key: *k, retention_period: 1d, retention_period: 2d}\n",
		"metadata_cleanup: {retention_period: -1d, names: [{retention_period: 0s}]}\n",
		"cluster: {enabled: true, etcd: {endpoints: [\"http://u:${PW}@e:1\", \"[::1]:0\", \"a:b:c\"], prefix: /x}, bind: \":\", advertise: \"h:65536\", drain_helpers: -1, fence_after: 1s}\n",
	} {
		f.Add(s)
	}
	const secret = "Fuzz-S3cret-Value"
	env := func(string) (string, bool) { return secret, true }
	f.Fuzz(func(t *testing.T, body string) {
		c, err := parseConfig([]byte(body), env)
		if err != nil {
			if strings.Contains(err.Error(), secret) && !strings.Contains(body, secret) {
				t.Fatalf("error shows an expanded value: %v", err)
			}
			return
		}
		_ = c.Validate()
	})
}
