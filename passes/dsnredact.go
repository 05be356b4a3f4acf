package passes

import (
	"net/url"
	"slices"
	"strings"
)

// redacted replaces a secret in every rendering of a DSN.
const redacted = "xxxxx"

// unparsedDSN stands for a DSN that does not parse: nothing of it is shown, since
// where its password ends is unknown.
const unparsedDSN = "(a DSN that does not parse; not shown)"

// isSecretParam reports whether a DSN parameter holds a secret: libpq's password and
// sslpassword, SQLite's _auth_pass, and a SQLite encryption key pragma.
func isSecretParam(key, value string) bool {
	k := strings.ToLower(key)
	if strings.Contains(k, "pass") || strings.Contains(k, "secret") || strings.Contains(k, "token") || k == "key" {
		return true
	}
	v := strings.ToLower(value)
	return k == "_pragma" && (strings.HasPrefix(v, "key") || strings.HasPrefix(v, "rekey") || strings.HasPrefix(v, "hexkey"))
}

// RedactDSN returns dsn fit to show: every password, as user info, a query parameter or
// a key=value pair, replaced by xxxxx. A PostgreSQL DSN that does not parse is not shown
// at all. This is the one rule every message, log line and status output uses.
func RedactDSN(dsn string) string {
	s := strings.TrimSpace(dsn)
	if _, rest, ok := cutScheme(s); ok {
		c, err := parsePostgresDSN(s)
		if err != nil || ambiguousUserInfo(rest) {
			return unparsedDSN
		}
		return c.redactedURL()
	}
	if strings.HasPrefix(s, "file:") || !strings.Contains(s, "=") {
		return redactSQLite(s)
	}
	c, err := parsePostgresDSN(s)
	if err != nil {
		return unparsedDSN
	}
	return c.redactedKeyValues()
}

// RedactText removes from text every secret dsn holds (as written, and in the escaped
// forms a URL may carry it), for an error message that might quote one.
func RedactText(text, dsn string) string {
	for _, secret := range dsnSecrets(dsn) {
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.TrimPrefix(url.UserPassword("", secret).String(), ":")} {
			if form != "" {
				text = strings.ReplaceAll(text, form, redacted)
			}
		}
	}
	return text
}

// dsnSecrets lists the secrets of dsn, longest first (so a secret that holds another is
// replaced whole). A DSN that does not parse still yields what was read of it.
func dsnSecrets(dsn string) []string {
	var out []string
	s := strings.TrimSpace(dsn)
	scheme, rest, isURL := cutScheme(s)
	if isURL || strings.Contains(s, "=") && !strings.HasPrefix(s, "file:") {
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
			if isSecretParam(p.key, p.value) && p.value != "" {
				out = append(out, p.value)
			}
		}
	}
	if _, query, ok := strings.Cut(s, "?"); ok {
		for _, kv := range strings.Split(query, "&") {
			if k, v, _ := strings.Cut(kv, "="); isSecretParam(unescape(k), unescape(v)) && v != "" {
				out = append(out, v, unescape(v))
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
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
		u.User = url.UserPassword(c.user, redacted)
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
		add("password", redacted)
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
		if isSecretParam(p.key, p.value) {
			p.value = redacted
		}
		out = append(out, p)
	}
	return out
}

// redactSQLite replaces the secret query parameters of a SQLite DSN.
func redactSQLite(s string) string {
	path, query, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	parts := strings.Split(query, "&")
	for i, kv := range parts {
		if k, v, _ := strings.Cut(kv, "="); isSecretParam(unescape(k), unescape(v)) {
			parts[i] = k + "=" + redacted
		}
	}
	return path + "?" + strings.Join(parts, "&")
}

// ambiguousUserInfo reports whether the URL after its scheme has an '@' past the one
// taken to end its user info: a password pasted raw with '/', '?' and '@' in it could
// then run to that later '@', so where the password ends is not known for sure.
func ambiguousUserInfo(rest string) bool {
	return strings.LastIndexByte(rest, '@') != userInfoEnd(rest)
}
