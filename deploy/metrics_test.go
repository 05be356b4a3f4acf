package deploy

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// docMetric is one row of the table in docs/metrics.md.
type docMetric struct {
	name, kind, status string
}

// series are the names a scrape of the metric shows: a histogram's _bucket, _sum and
// _count, anything else its own name.
func (m docMetric) series() []string {
	if m.kind == "histogram" {
		return []string{m.name + "_bucket", m.name + "_sum", m.name + "_count"}
	}
	return []string{m.name}
}

var docRow = regexp.MustCompile("^\\| `(retention_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\| [^|]+ \\| (emitted|planned) \\|")

// documentedMetrics reads the metric table of docs/metrics.md.
func documentedMetrics(t *testing.T) []docMetric {
	t.Helper()
	f, err := os.Open("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docMetric
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := docRow.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, docMetric{m[1], m[2], m[3]})
		} else if strings.HasPrefix(sc.Text(), "| `retention_") {
			t.Errorf("docs/metrics.md: a metric row not in the form | `name` | type | labels | emitted or planned | meaning |: %s", sc.Text())
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/metrics.md lists no metric")
	}
	return out
}

// documentedSeries maps every series name a documented metric shows to its metric.
func documentedSeries(t *testing.T) map[string]docMetric {
	out := map[string]docMetric{}
	for _, m := range documentedMetrics(t) {
		for _, s := range m.series() {
			out[s] = m
		}
	}
	return out
}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promVars     = regexp.MustCompile(`\$\{?\w+\}?`)
	promNumbers  = regexp.MustCompile(`\b\d[\w.]*`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// metricNames are the metric names a PromQL expression selects. It reads just enough
// PromQL for our own files: strings, label matchers, ranges, grouping clauses, Grafana
// variables and numbers are set aside; a name followed by "(" is a function or an
// aggregation; keywords are not names. What is left is a metric.
func metricNames(expr string) []string {
	s := promStrings.ReplaceAllString(expr, " ")
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRanges.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	s = promVars.ReplaceAllString(s, " ")
	s = promNumbers.ReplaceAllString(s, " ")
	seen := map[string]bool{}
	for _, m := range promIdent.FindAllStringSubmatch(s, -1) {
		name := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[0]), "("))
		if m[1] != "" || slices.Contains(promKeywords, strings.ToLower(name)) {
			continue
		}
		seen[name] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum by (pass) (rate(retention_rows_deleted_total{pass=~"$pass", instance="a{b}"}[$__rate_interval]))`, []string{"retention_rows_deleted_total"}},
		{`histogram_quantile(0.95, sum by (pass, le) (rate(retention_batch_duration_seconds_bucket[5m])))`, []string{"retention_batch_duration_seconds_bucket"}},
		{`time() - retention_last_success_timestamp_seconds > 2 * retention_pass_interval_seconds and retention_last_success_timestamp_seconds > 0`,
			[]string{"retention_last_success_timestamp_seconds", "retention_pass_interval_seconds"}},
		{`min_over_time(a[1h]) > min_over_time(a[1h] offset 1h) and on (pass) group_left b unless bool c`, []string{"a", "b", "c"}},
		{`max without (reason) (x) or vector(0) + 1e3 + Inf`, []string{"x"}},
	}
	for _, tt := range tests {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

// checkExpr fails t for every name expr selects that docs/metrics.md does not list, and
// records the documented metrics it uses.
func checkExpr(t *testing.T, where, expr string, known map[string]docMetric, used map[string]bool) {
	t.Helper()
	names := metricNames(expr)
	if len(names) == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	for _, n := range names {
		m, ok := known[n]
		if !ok {
			t.Errorf("%s: %q uses %s, which docs/metrics.md does not list", where, expr, n)
			continue
		}
		used[m.name] = true
	}
}

// rulesFile is the part of a Prometheus rules file the tests read.
type rulesFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert  string            `yaml:"alert"`
			Expr   string            `yaml:"expr"`
			For    string            `yaml:"for"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func TestAlertRulesUseDocumentedMetrics(t *testing.T) {
	raw, err := os.ReadFile("prometheus/retention-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rf rulesFile
	if err := yaml.Unmarshal(raw, &rf); err != nil {
		t.Fatal(err)
	}
	known, used := documentedSeries(t), map[string]bool{}
	var alerts []string
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			checkExpr(t, "rule "+r.Alert, r.Expr, known, used)
			if sev := r.Labels["severity"]; sev != "warning" && sev != "critical" {
				t.Errorf("rule %s: severity %q, want warning or critical", r.Alert, sev)
			}
		}
	}
	// The situations the rules must cover, each by its alert.
	for _, want := range []string{"RetentionPassFailing", "RetentionBacklogGrowing", "RetentionOldestDeletableTooOld", "RetentionPassNotSweeping", "RetentionQuarantineGrowing"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s in %v", want, alerts)
		}
	}
}

// Both promtool checks: the file is valid, and every alert fires (and stays quiet) as
// retention-rules_test.yml expects.
func TestAlertRulesPromtool(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	for _, args := range [][]string{
		{"check", "rules", "retention-rules.yml"},
		{"test", "rules", "retention-rules_test.yml"},
	} {
		out, code := runIn(t, "prometheus", nil, promtool, args...)
		if code != 0 || !strings.Contains(out, "SUCCESS") {
			t.Errorf("promtool %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
}

func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("grafana/retention.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []grafanaPanel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana/retention.json does not parse: %v", err)
	}
	if dash.Title == "" || dash.UID == "" {
		t.Errorf("dashboard needs a title and a uid, has %q and %q", dash.Title, dash.UID)
	}
	known, used := documentedSeries(t), map[string]bool{}

	vars := map[string]bool{}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`)
	for _, v := range dash.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		if m, ok := v.Query.(map[string]any); ok {
			q, _ = m["query"].(string)
		}
		sel := labelValues.FindStringSubmatch(q)
		if sel == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, q)
			continue
		}
		checkExpr(t, "variable "+v.Name, sel[1], known, used)
	}
	for _, want := range []string{"datasource", "instance", "pass"} {
		if !vars[want] {
			t.Errorf("dashboard has no $%s variable", want)
		}
	}

	ids := map[int]string{}
	var walk func(ps []grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup {
				t.Errorf("panels %q and %q share id %d", prev, p.Title, p.ID)
			}
			ids[p.ID] = p.Title
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: datasource %q, want ${datasource}", p.Title, p.Datasource.UID)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, q := range p.Targets {
				checkExpr(t, "panel "+p.Title, q.Expr, known, used)
			}
		}
	}
	walk(dash.Panels)
	for _, m := range documentedMetrics(t) {
		if !used[m.name] {
			t.Errorf("no panel shows %s", m.name)
		}
	}
}

// grafanaPanel is the part of a dashboard panel the test reads.
type grafanaPanel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

// The status column tells the truth: a metric marked emitted is registered by the node
// (cmd/node or the node/ packages it wires), one marked planned is not yet (drop the mark
// when it is).
func TestMetricsDocMatchesNode(t *testing.T) {
	var files []string
	for _, glob := range []string{"../cmd/node/*.go", "../node/*/*.go"} {
		more, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, more...)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, m := range documentedMetrics(t) {
		registered := strings.Contains(src.String(), `"`+m.name+`"`)
		switch {
		case m.status == "emitted" && !registered:
			t.Errorf("docs/metrics.md marks %s emitted, but the node does not register it", m.name)
		case m.status == "planned" && registered:
			t.Errorf("docs/metrics.md marks %s planned, but the node registers it: mark it emitted", m.name)
		}
	}
}
