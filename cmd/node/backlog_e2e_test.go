package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// figures are one pass's backlog as one reader shows it: deletable, held, quarantined.
type figures [3]int64

// TestOneBacklogEverywhere seeds the demo's database, sweeps its audit log once (a
// sweep that stops at its batch bound, with one row entered into quarantine and rows
// on legal hold), and reads the pass's deletable, held and quarantined rows from
// `status`, /metrics, the dashboard and `sweep --dry-run`: all four show the same three
// figures. A row crossing the retention boundary between two reads (the demo has one
// about every two minutes) moves a figure for one round, so the round is read again
// until all four agree, within a deadline; a reader that counts differently never agrees.
func TestOneBacklogEverywhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "demo.db")
	seedCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(seedCtx, "go", "run", "../../examples/demo/seed", "-db", db).CombinedOutput(); err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	vars := []string{"RETENTION_DEMO_DB=" + db, "RETENTION_DEMO_ADMIN=127.0.0.1:0", "RETENTION_ADMIN_TOKEN="}
	retention := func(t *testing.T, args ...string) result { t.Helper(); return retentionWith(t, vars, args...) }
	config := "../../examples/demo/retention.yaml"
	if r := retention(t, "sweep", "--config", config, "--pass", "audit-log", "--progress", "never"); r.code != 0 {
		t.Fatalf("sweep: exit %d: %s", r.code, r.stderr)
	}
	for _, pass := range []string{"audit-log", "sessions"} {
		if r := retention(t, "pause", "--config", config, pass); r.code != 0 {
			t.Fatalf("pause %s: exit %d: %s", pass, r.code, r.stderr)
		}
	}
	n := startRunWith(t, vars, config)
	addr := n.waitLog(t, "admin endpoint listening", "")["addr"].(string)
	get := func(p string) (int, string) {
		resp, err := http.Get("http://" + addr + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	deadline := time.Now().Add(2 * time.Minute) // the metrics' cache lasts 30s
	for round := 1; ; round++ {
		read := map[string]figures{
			"status":    tableFigures(t, retention(t, "status", "--config", config), "audit-log"),
			"/metrics":  metricFigures(t, get),
			"/ui/":      uiFigures(t, get),
			"--dry-run": tableFigures(t, retention(t, "sweep", "--config", config, "--dry-run"), "audit-log"),
		}
		want := read["/metrics"]
		agree := want[0] > 0 && want[1] > 0 && want[2] > 0
		for _, f := range read {
			agree = agree && f == want
		}
		if agree {
			t.Logf("round %d: deletable %d, held %d, quarantined %d everywhere", round, want[0], want[1], want[2])
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the readers never agreed on audit-log's deletable, held and quarantined rows (all three non-zero); last round: %v", read)
		}
		// The next round starts at once: a round is four processes and two HTTP reads,
		// seconds of work, and a row crosses the boundary about every two minutes, so
		// the next round reads a settled backlog; nothing here waits for an event.
	}
}

// tableFigures reads the three columns after PASS on pass's line of a command's table
// (status: BACKLOG HELD QUARANTINED; sweep --dry-run: WOULD DELETE HELD QUARANTINED).
func tableFigures(t *testing.T, r result, pass string) figures {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for line := range strings.SplitSeq(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == pass {
			var out figures
			for i := range out {
				v, err := strconv.ParseInt(f[i+1], 10, 64)
				if err != nil {
					t.Fatalf("column %d of %q: %v\n%s", i+2, line, err, r.stdout)
				}
				out[i] = v
			}
			return out
		}
	}
	t.Fatalf("no line for %s:\n%s", pass, r.stdout)
	return figures{}
}

func metricFigures(t *testing.T, get func(string) (int, string)) figures {
	t.Helper()
	var out figures
	for i, m := range []string{"retention_backlog_rows", "retention_held_rows", "retention_quarantined_rows"} {
		out[i] = int64(metricValue(t, get, m+`{pass="audit-log"}`))
	}
	return out
}

// uiFigures reads the backlog, held and quarantined cells of audit-log's row on the
// passes page.
func uiFigures(t *testing.T, get func(string) (int, string)) figures {
	t.Helper()
	code, body := get("/ui/")
	if code != http.StatusOK {
		t.Fatalf("/ui/ = %d", code)
	}
	start := strings.Index(body, `<tr data-pass="audit-log"`)
	if start < 0 {
		t.Fatalf("/ui/ has no row for audit-log:\n%.3000s", body)
	}
	row := body[start:]
	row = row[:strings.Index(row, "</tr>")]
	var out figures
	for i, k := range []string{"backlog", "held", "quarantined"} {
		m := regexp.MustCompile(fmt.Sprintf(`data-k="%s"[^>]*>([0-9]+)<`, k)).FindStringSubmatch(row)
		if m == nil {
			t.Fatalf("/ui/: no %s figure in audit-log's row:\n%s", k, row)
		}
		out[i], _ = strconv.ParseInt(m[1], 10, 64)
	}
	return out
}
