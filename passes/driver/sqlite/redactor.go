package sqlite

import (
	"strings"

	"github.com/retentionkit/retention/passes/driver"
)

// RedactDSN replaces the values of a SQLite DSN's secret query parameters (_auth_pass,
// an encryption key pragma); the file path is shown as written.
func (Driver) RedactDSN(dsn string) string {
	s := strings.TrimSpace(dsn)
	path, query, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	parts := strings.Split(query, "&")
	for i, kv := range parts {
		if k, v, _ := strings.Cut(kv, "="); driver.IsSecretParam(driver.Unescape(k), driver.Unescape(v)) {
			parts[i] = k + "=" + driver.Redacted
		}
	}
	return path + "?" + strings.Join(parts, "&")
}

// RedactText removes the values of dsn's secret query parameters from text.
func (Driver) RedactText(text, dsn string) string {
	return driver.RedactSecrets(text, driver.QuerySecrets(strings.TrimSpace(dsn)))
}
