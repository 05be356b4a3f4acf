package deploy

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unitFile is a systemd unit as section -> key -> values (a key may repeat).
type unitFile map[string]map[string][]string

func readUnit(t *testing.T, path string) unitFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, section := unitFile{}, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: not a key=value in a section: %q", path, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func (u unitFile) get(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) != 1 {
		t.Fatalf("[%s] %s: %d values %v, want one", section, key, len(vs), vs)
	}
	return vs[0]
}

// The unit restarts the node whatever way it ends, never gives up, and waits longer than
// the node's shutdown grace before killing it; its command line is one the binary takes.
func TestSystemdUnit(t *testing.T) {
	u := readUnit(t, "systemd/retention.service")
	if got := u.get(t, "Service", "Restart"); got != "always" {
		t.Errorf("Restart=%s, want always", got)
	}
	if got := u.get(t, "Unit", "StartLimitIntervalSec"); got != "0" {
		t.Errorf("StartLimitIntervalSec=%s, want 0 (never stop restarting)", got)
	}
	if got := u.get(t, "Service", "KillSignal"); got != "SIGTERM" {
		t.Errorf("KillSignal=%s, want SIGTERM (the node's graceful stop)", got)
	}
	stop, err := time.ParseDuration(u.get(t, "Service", "TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	if grace := 30 * time.Second; stop <= grace {
		t.Errorf("TimeoutStopSec=%s is not longer than the default node.shutdown_grace %s", stop, grace)
	}
	exec := strings.Fields(u.get(t, "Service", "ExecStart"))
	if exec[0] != "/usr/local/bin/retention" || exec[1] != "run" {
		t.Fatalf("ExecStart=%v, want /usr/local/bin/retention run ...", exec)
	}
	// The same arguments with --help: the binary knows the command and every flag.
	if out, code := run(t, nil, binary, append(exec[1:], "--help")...); code != 0 {
		t.Errorf("retention %s --help: exit %d\n%s", strings.Join(exec[1:], " "), code, out)
	}
}

// systemd-analyze verify finds nothing to say about the unit. It says unknown keys and
// bad values on stderr but still exits 0, so any output fails the test. ExecStart must
// name an existing file, so the check runs on a copy pointing at the built binary.
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze := tool(t, "systemd-analyze", "systemd")
	raw, err := os.ReadFile("systemd/retention.service")
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "retention.service")
	unit := strings.Replace(string(raw), "ExecStart=/usr/local/bin/retention ", "ExecStart="+binary+" ", 1)
	if err := os.WriteFile(copied, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, nil, analyze, "verify", copied)
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: exit %d\n%s", code, out)
	}
}
