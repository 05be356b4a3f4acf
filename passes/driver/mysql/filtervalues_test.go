package mysql

import "testing"

// TestIsNumber: what a numeric column's filter accepts as a string; anything MySQL would
// convert only by truncating (or not at all) is refused.
func TestIsNumber(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"3", true}, {"-12", true}, {"1.5", true}, {" 7 ", true}, {"1e3", true},
		{"done", false}, {"3abc", false}, {"", false}, {"0x1F", false}, {"1_000", false},
		{"NaN", false}, {"inf", false}, {"maybe", false},
	} {
		if got := isNumber(tc.s); got != tc.want {
			t.Errorf("isNumber(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
