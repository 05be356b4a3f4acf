package mysql

import (
	"strings"
	"testing"
)

// A MySQL DSN's password, wherever a raw '@' or ':' puts its end, never shows in the
// redacted DSN or in a message that quotes the DSN.
func TestRedactDSN(t *testing.T) {
	tests := []struct{ dsn, secret, want string }{
		{"app:S3cretPw@tcp(db:3306)/shop?parseTime=true", "S3cretPw", "app:xxxxx@tcp(db:3306)/shop?parseTime=true"},
		{"app:p@ss:w0rd@tcp(db:3306)/shop", "p@ss:w0rd", "app:xxxxx@tcp(db:3306)/shop"},
		{"app:S3cretPw@unix(/run/mysqld/mysqld.sock)/shop", "S3cretPw", "app:xxxxx@unix(/run/mysqld/mysqld.sock)/shop"},
		{"root@tcp(127.0.0.1:3306)/", "", "root@tcp(127.0.0.1:3306)/"},
	}
	d := Driver{}
	for _, tc := range tests {
		if got := d.RedactDSN(tc.dsn); got != tc.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
		if tc.secret == "" {
			continue
		}
		if got := d.RedactText("connect "+tc.dsn+": refused", tc.dsn); strings.Contains(got, tc.secret) {
			t.Errorf("RedactText(%q) = %q shows the password", tc.dsn, got)
		}
	}
	// A DSN that does not parse is not shown, and its would-be password is still kept
	// out of messages.
	bad := "app:S3cretPw@tcp(db:3306"
	if got := d.RedactDSN(bad); strings.Contains(got, "S3cretPw") {
		t.Errorf("RedactDSN(%q) = %q", bad, got)
	}
	if got := d.RedactText("bad "+bad, bad); strings.Contains(got, "S3cretPw") {
		t.Errorf("RedactText of an unparsed DSN = %q", got)
	}
	if err := d.CheckDSN(bad); err == nil || strings.Contains(err.Error(), "S3cretPw") {
		t.Errorf("CheckDSN(%q) = %v; want a bad DSN error without the password", bad, err)
	}
}
