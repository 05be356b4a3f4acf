// End-to-end tests of the command line itself: unknown commands, examples in every
// help, wrong pass names, flags checked before work, negative values, counts in words.
package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/retentionkit/retention/passes"
)

// A word that is not a command is a usage error (exit 2, docs/node.md), at the top and
// inside a group, with the nearest command when there is one; a group alone shows its
// help.
func TestUnknownCommandsExit2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string // in stderr for a failure, in stdout otherwise
	}{
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate" for "retention"`},
		{[]string{"swep", "--config", "x.yaml"}, 2, "did you mean sweep?"},
		{[]string{"settings", "frob"}, 2, `unknown command "frob" for "retention settings"`},
		{[]string{"quarantine", "lst"}, 2, "did you mean list?"},
		{[]string{"completion", "tcsh"}, 2, `unknown command "tcsh" for "retention completion"`},
		{[]string{"help", "frob"}, 2, `unknown command "frob" for "retention"`},
		{[]string{"help", "settings", "frob"}, 2, `unknown command "frob" for "retention settings"`},
		{[]string{"help", "sweep"}, 0, "--no-ledger"},
		{nil, 0, "Available Commands"},
		{[]string{"settings"}, 0, "Available Commands"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(append([]string{"retention"}, tc.args...), " "), func(t *testing.T) {
			t.Parallel()
			r := retention(t, tc.args...)
			out := r.stdout
			if tc.code != 0 {
				out = r.stderr
			}
			if r.code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
}

// Every command, groups and cobra's own help and completion included, shows an example
// in its --help.
func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" {
			t.Errorf("%q has no example in its help", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(io.Discard, io.Discard))
	// and as a user sees it
	for _, args := range [][]string{{"--help"}, {"settings", "--help"}, {"quarantine", "--help"}, {"completion", "bash", "--help"}} {
		if r := retention(t, args...); r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("retention %s: exit %d, no examples:\n%s", strings.Join(args, " "), r.code, r.stdout)
		}
	}
}

// A pass name the file does not have is refused with the names it does have.
func TestWrongPassNameListsThePasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	path := e.config("  - { name: sessions, table: "+e.prefix+"audit_log, key: id, timestamp: occurred_at, timestamp_format: unix, retention_period: 1d }", "")
	for _, args := range [][]string{
		{"trigger", "--config", path, "audit-logs"},
		{"sweep", "--config", path, "--pass", "audit-logs"},
		{"sweep", "--config", path, "--pass", "audit-logs", "--dry-run"},
	} {
		r := retention(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, `"audit-logs"`) || !strings.Contains(r.stderr, "(passes: audit-log, sessions)") {
			t.Errorf("retention %s: exit %d, want 2 listing the passes:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}

// sweep's flag values are checked before anything runs, the same with --dry-run: a dry
// run with a bad --progress does not print a count as if it were fine.
func TestSweepFlagsCheckedWithDryRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	path := e.config("", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--progress", "sometimes"}, `--progress "sometimes": want auto, always or never`},
		{[]string{"--drain-retry", "-1s"}, "--drain-retry -1s: must not be negative"},
	} {
		args := append([]string{"sweep", "--config", path, "--dry-run"}, tc.args...)
		r := retention(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stdout, "WOULD DELETE") {
			t.Errorf("retention %s: exit %d, want 2 with %q\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, tc.want, r.stdout, r.stderr)
		}
	}
}

// A negative value after `settings set` reaches the value's own check (not pflag's
// "unknown shorthand flag"), before or after `--`, with the flags anywhere.
func TestSettingsSetTakesANegativeValue(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	path := e.config("", "")
	if r := retention(t, "migrate", "--config", path); r.code != 0 {
		t.Fatalf("migrate: exit %d: %s", r.code, r.stderr)
	}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--config", path, "pass.audit-log.batch_size", "-1"}, 2, `pass.audit-log.batch_size: pass "audit-log": batch_size must be at least 1, got -1`},
		{[]string{"pass.audit-log.batch_delay", "-1s", "--config", path}, 2, `batch_delay must not be negative, got -1s`},
		{[]string{"--config", path, "--", "pass.audit-log.batch_size", "-5"}, 2, "batch_size must be at least 1, got -5"},
		{[]string{"--config", path, "metadata_cleanup.retention_period", "-2h"}, 2, `metadata_cleanup.retention_period must be a positive duration, got "-2h"`},
		{[]string{"pass.audit-log.batch_size", "200", "--config", path}, 0, "pass.audit-log.batch_size = 200"},
		{[]string{"--config", path, "pass.audit-log.batch_size"}, 2, "accepts 2 arg(s), received 1"},
		{[]string{"--config", path, "--bogus", "pass.audit-log.batch_size", "1"}, 2, "unknown flag: --bogus"},
		{[]string{"--config", path, "--log-format", "xml", "pass.audit-log.batch_size", "1"}, 2, "--log-format"},
	}
	for _, tc := range tests {
		r := retention(t, append([]string{"settings", "set"}, tc.args...)...)
		out := r.stderr
		if tc.code == 0 {
			out = r.stdout
		}
		if r.code != tc.code || !strings.Contains(out, tc.want) || strings.Contains(r.stderr, "shorthand") {
			t.Errorf("settings set %s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), r.code, tc.code, tc.want, r.stdout, r.stderr)
		}
	}
	if r := retention(t, "settings", "set", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
		t.Errorf("settings set --help: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// One of a thing reads in the singular wherever the CLI counts in words.
func TestCountsOfOneAreSingular(t *testing.T) {
	t.Parallel()
	e := newEnv(t, passes.DriverSQLite)
	e.seed0(1)
	path := e.config("", "")
	if r := retention(t, "validate", "--config", path); r.code != 0 || r.stdout != "ok: 1 pass\n" {
		t.Errorf("validate: exit %d, stdout %q, want \"ok: 1 pass\\n\": %s", r.code, r.stdout, r.stderr)
	}
	r := retention(t, "sweep", "--config", path, "--progress", "never")
	if r.code != 0 || !strings.Contains(r.stdout, "audit-log: batch 1 deleted 1 row\n") {
		t.Errorf("sweep: exit %d, want a line \"batch 1 deleted 1 row\":\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestCounted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 passes"}, {1, "1 pass"}, {2, "2 passes"}, {-1, "-1 passes"}} {
		if got := counted(tc.n, "pass", "passes"); got != tc.want {
			t.Errorf("counted(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
