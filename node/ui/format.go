package ui

import (
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/retentionkit/retention/passes/ledger"
)

// funcs are the templates' formatting helpers; "—" stands for a value not known.
func funcs() template.FuncMap {
	return template.FuncMap{
		"ts":      stamp,
		"tsp":     func(t *time.Time) string { return stampPtr(t) },
		"ago":     ago,
		"dur":     shortDuration,
		"exact":   exactDuration,
		"durp":    func(d *time.Duration) string { return durPtr(d) },
		"num":     func(p *int64) string { return numPtr(p) },
		"str":     func(p *string) string { return strPtr(p) },
		"path":    url.PathEscape,
		"add":     func(a, b int) int { return a + b },
		"orDash":  orDash,
		"pagerOf": func(p pager, id string) map[string]any { return map[string]any{"P": p, "ID": id} },
		"liveOf": func(live []ledger.Setting, page view) map[string]any {
			return map[string]any{"Live": live, "Page": page}
		},
	}
}

const dash = "—"

func stamp(t time.Time) string {
	if t.IsZero() {
		return dash
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func stampPtr(t *time.Time) string {
	if t == nil {
		return dash
	}
	return stamp(*t)
}

// ago is how long before now t was ("12s ago"), or until t when it is ahead ("in 3m").
func ago(t time.Time, now time.Time) string {
	if t.IsZero() {
		return dash
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + shortDuration(-d)
	}
	return shortDuration(d) + " ago"
}

// shortDuration rounds d to its two largest units (1d4h, 3m12s, 450ms).
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return trimZeros(d.Round(time.Second).String())
	case d < 24*time.Hour:
		return trimZeros(d.Round(time.Minute).String())
	}
	d = d.Round(time.Hour)
	days, hours := int64(d/(24*time.Hour)), int64(d%(24*time.Hour)/time.Hour)
	if hours == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, hours)
}

// trimZeros drops the zero units Go writes after the last one that counts: 1h0m0s is
// 1h, 5h32m0s is 5h32m.
func trimZeros(s string) string {
	for _, z := range []string{"0s", "0m"} {
		if rest, ok := strings.CutSuffix(s, z); ok && rest != "" && !strings.HasSuffix(rest, ".") && (rest[len(rest)-1] < '0' || rest[len(rest)-1] > '9') {
			s = rest
		}
	}
	return s
}

// exactDuration writes d so that config.ParseDuration reads back exactly d: whole days as
// days (30d), anything else as Go writes it (1h30m0s). An edit form's value must not be
// rounded, or saving it unchanged would move the setting.
func exactDuration(d time.Duration) string {
	if day := 24 * time.Hour; d > 0 && d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	return d.String()
}

func durPtr(d *time.Duration) string {
	switch {
	case d == nil:
		return dash
	case *d == 0:
		return "none"
	}
	return shortDuration(*d)
}

func numPtr(p *int64) string {
	if p == nil {
		return dash
	}
	return fmt.Sprint(*p)
}

func strPtr(p *string) string {
	if p == nil {
		return dash
	}
	return orDash(*p)
}

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

// nice rounds v up to 1, 2 or 5 times a power of ten, for a chart's top line.
func nice(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
