package postgres

import (
	"net/url"
	"strings"

	"github.com/retentionkit/retention/passes/driver"
)

// unparsedDSN stands for a DSN that does not parse: nothing of it is shown, since
// where its password ends is unknown.
const unparsedDSN = "(a DSN that does not parse; not shown)"

// RedactDSN returns dsn fit to show: every password, as user info, a query parameter or
// a key=value pair, replaced by xxxxx. A DSN that does not parse as one of libpq's two
// forms is not shown at all, since where its password ends is unknown.
func (Driver) RedactDSN(dsn string) string {
	s := strings.TrimSpace(dsn)
	if _, rest, ok := cutScheme(s); ok {
		c, err := parsePostgresDSN(s)
		if err != nil || ambiguousUserInfo(rest) {
			return unparsedDSN
		}
		return c.redactedURL()
	}
	c, err := parsePostgresDSN(s)
	if err != nil {
		return unparsedDSN
	}
	return c.redactedKeyValues()
}

// RedactText removes from text every secret dsn holds (as written, and in the escaped
// forms a URL may carry it), for an error message that might quote one.
func (Driver) RedactText(text, dsn string) string {
	return driver.RedactSecrets(text, dsnSecrets(dsn))
}

// dsnSecrets lists the secrets of dsn. A DSN that does not parse still yields what was
// read of it.
func dsnSecrets(dsn string) []string {
	var out []string
	s := strings.TrimSpace(dsn)
	scheme, rest, isURL := cutScheme(s)
	c, _ := parsePostgresDSN(s)
	if c.password != "" {
		out = append(out, c.password)
	}
	if isURL && ambiguousUserInfo(rest) { // the password may run to the last '@' too
		if alt, _ := readURL(scheme, rest, strings.LastIndexByte(rest, '@')); alt.password != "" {
			out = append(out, alt.password)
		}
	}
	for _, p := range c.params {
		if driver.IsSecretParam(p.key, p.value) && p.value != "" {
			out = append(out, p.value)
		}
	}
	return append(out, driver.QuerySecrets(s)...)
}

// redactedURL writes c back as a URL with its secrets replaced.
func (c pgConn) redactedURL() string {
	u := url.URL{Scheme: c.scheme, Path: "", Host: c.host}
	if strings.ContainsAny(c.host, ":") {
		u.Host = "[" + c.host + "]"
	}
	if c.port != "" {
		u.Host += ":" + c.port
	}
	switch {
	case c.hasPassword:
		u.User = url.UserPassword(c.user, driver.Redacted)
	case c.user != "":
		u.User = url.User(c.user)
	}
	if c.dbname != "" {
		u.Path = "/" + c.dbname
	}
	var q []string
	for _, p := range c.shownParams() {
		q = append(q, url.QueryEscape(p.key)+"="+url.QueryEscape(p.value))
	}
	u.RawQuery = strings.Join(q, "&")
	return u.String()
}

// redactedKeyValues writes c back as key=value pairs with its secrets replaced.
func (c pgConn) redactedKeyValues() string {
	var parts []string
	add := func(k, v string) {
		if v == "" {
			return
		}
		if strings.ContainsAny(v, " '\\") || v == "" {
			v = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
		}
		parts = append(parts, k+"="+v)
	}
	add("host", c.host)
	add("port", c.port)
	add("user", c.user)
	if c.hasPassword {
		add("password", driver.Redacted)
	}
	add("dbname", c.dbname)
	for _, p := range c.shownParams() {
		add(p.key, p.value)
	}
	return strings.Join(parts, " ")
}

// shownParams are c's other parameters with secret values replaced.
func (c pgConn) shownParams() []param {
	var out []param
	if c.applicationName != "" {
		out = append(out, param{"application_name", c.applicationName})
	}
	if c.fallbackAppNm != "" {
		out = append(out, param{"fallback_application_name", c.fallbackAppNm})
	}
	for _, p := range c.params {
		if driver.IsSecretParam(p.key, p.value) {
			p.value = driver.Redacted
		}
		out = append(out, p)
	}
	return out
}

// ambiguousUserInfo reports whether the URL after its scheme has an '@' past the one
// taken to end its user info: a password pasted raw with '/', '?' and '@' in it could
// then run to that later '@', so where the password ends is not known for sure.
func ambiguousUserInfo(rest string) bool {
	return strings.LastIndexByte(rest, '@') != userInfoEnd(rest)
}
