package main

import (
	"slices"
	"testing"
)

func TestReleaseKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		arg     string
		want    []string
		wantErr bool
	}{
		{arg: "42", want: []string{`["42"]`, `[42]`}},
		{arg: "abc", want: []string{`["abc"]`}},
		{arg: "4a", want: []string{`["4a"]`}},
		{arg: `["eu", 7]`, want: []string{`["eu",7]`}},
		{arg: `[ "2020-01-01 00:04:00+00:00" ]`, want: []string{`["2020-01-01 00:04:00+00:00"]`}},
		{arg: "[9", wantErr: true},
		{arg: "[]", wantErr: true},
	}
	for _, c := range cases {
		got, err := releaseKeys(c.arg)
		if (err != nil) != c.wantErr || !slices.Equal(got, c.want) {
			t.Errorf("releaseKeys(%q) = %q, %v; want %q (error %v)", c.arg, got, err, c.want, c.wantErr)
		}
	}
}
