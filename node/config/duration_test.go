package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseDurationAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"30d", 30 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"12h1d", 36 * time.Hour},
		{"90s", 90 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"1.5h", 90 * time.Minute},
		{".5s", 500 * time.Millisecond},
		{"250ms", 250 * time.Millisecond},
		{"3us", 3 * time.Microsecond},
		{"3µs", 3 * time.Microsecond},
		{"7ns", 7},
		{"0", 0},
		{" 2h ", 2 * time.Hour},
		{"-1s", -time.Second},
		{"36500d", MaxDuration},
		{"876000h", MaxDuration},
		{"720h0m0s", 30 * 24 * time.Hour},
		{"1h56m40.002010002s", 7000002010002},
		{"0.999999999s", 999999999},
		{"1.0000000001s", time.Second},
		{"0.1d", 144 * time.Minute},
		{"1.123456789012345678901234ms", 1123456},
	}
	for _, tc := range tests {
		got, err := ParseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// The values of the issue: 213504d overflowed to a cutoff 25 minutes ago, 106752d to a
// negative duration. Every one is refused, and the message shows it as written.
func TestParseDurationRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"213504d", "longer than the maximum"},
		{"106752d", "longer than the maximum"},
		{"36501d", "longer than the maximum"},
		{"36500d1ns", "longer than the maximum"},
		{"876001h", "longer than the maximum"},
		{"2562048h", "longer than the maximum"},
		{"99999999999999999999999h", "longer than the maximum"},
		{"52560001m", "longer than the maximum"},
		{"9223372036854775807ns", "longer than the maximum"},
		{"18446744073709551616ns", "longer than the maximum"},
		{"20000d20000d", "longer than the maximum"},
		{"-213504d", "longer than the maximum"},
		{"30", "without a unit"},
		{"", "is empty"},
		{"-", "is empty"},
		{"abc", "not a duration"},
		{"1x", "unknown unit"},
		{"1d-2h", "not a duration"},
		{"1..5h", "unknown unit"},
	}
	for _, tc := range tests {
		d, err := ParseDuration(tc.in)
		if err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", tc.in, d)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"`+tc.in+`"`) {
			t.Errorf("ParseDuration(%q): %v; want it to say %q and show the value as written", tc.in, err, tc.want)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "1d12h", "213504d", "106752d", "2562048h", "1.5h", "0", "-1s", "9223372036854775807ns", "1e9h", ".h", "µs", "7000002010002ns", "1h56m40.002010002s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d > MaxDuration || d < -MaxDuration {
			t.Fatalf("ParseDuration(%q) = %v, past the maximum", s, d)
		}
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, which reads back as %v, %v", s, d, back, err)
		}
	})
}
