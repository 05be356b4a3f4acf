package mysql

import (
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/retentionkit/retention/passes/driver"
)

// unparsedDSN stands for a DSN that does not parse: nothing of it is shown, since
// where its password ends is unknown.
const unparsedDSN = "(a DSN that does not parse; not shown)"

// RedactDSN returns dsn fit to show: the password of user:password@ and every secret
// parameter replaced by xxxxx. It is written back by go-sql-driver's own formatter from
// what its parser read, so the password shown redacted is the one the driver would send,
// wherever a raw '@' or ':' in it puts its end. A DSN that does not parse is not shown.
func (Driver) RedactDSN(dsn string) string {
	cfg, err := gomysql.ParseDSN(strings.TrimSpace(dsn))
	if err != nil {
		return unparsedDSN
	}
	if cfg.Passwd != "" {
		cfg.Passwd = driver.Redacted
	}
	for k, v := range cfg.Params {
		if driver.IsSecretParam(k, v) {
			cfg.Params[k] = driver.Redacted
		}
	}
	return cfg.FormatDSN()
}

// RedactText removes from text every secret dsn holds, for an error message that might
// quote one.
func (Driver) RedactText(text, dsn string) string {
	return driver.RedactSecrets(text, dsnSecrets(dsn))
}

// dsnSecrets lists the secrets of dsn: the password as the parser reads it and, for a
// DSN that does not parse, what lies between the user's ':' and the last '@' (where a
// password would be), and the secret query parameters.
func dsnSecrets(dsn string) []string {
	s := strings.TrimSpace(dsn)
	var out []string
	if cfg, err := gomysql.ParseDSN(s); err == nil {
		if cfg.Passwd != "" {
			out = append(out, cfg.Passwd)
		}
		for k, v := range cfg.Params {
			if driver.IsSecretParam(k, v) && v != "" {
				out = append(out, v)
			}
		}
	}
	if at := strings.LastIndexByte(s, '@'); at > 0 {
		if _, pass, ok := strings.Cut(s[:at], ":"); ok && pass != "" {
			out = append(out, pass)
		}
	}
	return append(out, driver.QuerySecrets(s)...)
}
