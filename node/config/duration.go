package config

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxDuration is the longest duration the configuration accepts (100 years of 365
// days). A retention longer than that is almost certainly a typo, and refusing it keeps
// every cutoff arithmetic far from time.Duration's limit of about 292 years, where a
// silent overflow would turn "keep for ages" into "delete almost everything".
const MaxDuration = 36500 * 24 * time.Hour

// durationUnits are the units a duration may use, longest name first where one is a
// prefix of another ("ms" before "m").
var durationUnits = []struct {
	name string
	size time.Duration
}{
	{"d", 24 * time.Hour}, {"h", time.Hour}, {"ms", time.Millisecond}, {"m", time.Minute},
	{"s", time.Second}, {"us", time.Microsecond}, {"µs", time.Microsecond}, {"ns", time.Nanosecond},
}

// errDurationTooLong is the error for a duration past MaxDuration.
var errDurationTooLong = fmt.Errorf("is longer than the maximum of %dd (100 years)", MaxDuration/(24*time.Hour))

// ParseDuration reads a duration such as "90s", "1h30m", "30d" or "1d12h": a sequence
// of numbers (a fraction allowed), each with a unit of d, h, m, s, ms, us or ns, and an
// optional leading sign. It refuses anything longer than MaxDuration, checking every
// step so that no input can overflow. Errors show the text as it was written.
func ParseDuration(s string) (time.Duration, error) {
	d, err := parseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("duration %q %w", s, err)
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, error) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "0" {
		return 0, nil
	}
	if s == "" {
		return 0, errors.New("is empty: want a number and a unit, such as 90s, 1h30m or 30d")
	}
	var total time.Duration
	for s != "" {
		part, rest, err := durationPart(s)
		if err != nil {
			return 0, err
		}
		if part > MaxDuration-total {
			return 0, errDurationTooLong
		}
		total += part
		s = rest
	}
	if neg {
		total = -total
	}
	return total, nil
}

// durationPart reads one number and unit from the front of s.
func durationPart(s string) (time.Duration, string, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	whole := s[:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac, i = s[i+1:j], j
	}
	if whole == "" && frac == "" {
		return 0, "", errors.New("is not a duration: want numbers with units, such as 90s, 1h30m or 30d")
	}
	for _, u := range durationUnits {
		if !strings.HasPrefix(s[i:], u.name) {
			continue
		}
		d, err := durationValue(whole, frac, u.size)
		return d, s[i+len(u.name):], err
	}
	if i == len(s) {
		return 0, "", errors.New("has a number without a unit: use d, h, m, s, ms, us or ns (30d, 90s)")
	}
	return 0, "", errors.New("has an unknown unit: use d, h, m, s, ms, us or ns (30d, 1h30m)")
}

// durationValue is whole.frac units, or errDurationTooLong past MaxDuration.
func durationValue(whole, frac string, unit time.Duration) (time.Duration, error) {
	limit := uint64(MaxDuration / unit)
	n := uint64(0)
	if whole != "" {
		var err error
		n, err = strconv.ParseUint(whole, 10, 64)
		if err != nil || n > limit {
			return 0, errDurationTooLong
		}
	}
	d := time.Duration(n) * unit
	d += fractionOf(frac, unit)
	if d > MaxDuration {
		return 0, errDurationTooLong
	}
	return d, nil
}

// fractionOf is 0.frac of unit, truncated to the nanosecond. It works in integers, not
// floats: a float64 holds about 16 digits, so "40.002010002s" once read back as a
// nanosecond short of what Duration.String had written. Digits past the 18th cannot
// change a nanosecond of any unit here, and stop the scale from overflowing.
func fractionOf(frac string, unit time.Duration) time.Duration {
	var num, scale uint64 = 0, 1
	for i := 0; i < len(frac) && i < 18; i++ {
		num, scale = num*10+uint64(frac[i]-'0'), scale*10
	}
	// num < scale, so num*unit < scale<<64: the high word is below scale and Div64
	// cannot overflow.
	hi, lo := bits.Mul64(num, uint64(unit))
	q, _ := bits.Div64(hi, lo, scale)
	return time.Duration(q)
}

// Duration is a configuration duration (see ParseDuration).
type Duration struct{ time.Duration }

// UnmarshalYAML parses a duration scalar. The loader checks every duration with its
// pass, field and line before decoding; this is the decoder's own step.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 30d or 90s", n.Line)
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	d.Duration = v
	return nil
}
