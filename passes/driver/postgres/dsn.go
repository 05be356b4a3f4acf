package postgres

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/retentionkit/retention/passes/driver"
)

// badDSN is driver.BadDSN, the error of a DSN that cannot be used as written.
var badDSN = driver.BadDSN

// pgConn is a PostgreSQL connection string taken apart. Both of libpq's forms read into
// it: the URL (postgres://user:password@host:port/dbname?param=value) and key=value
// pairs (host=db user=app password='a b').
type pgConn struct {
	form                           string // "url" or "keyvalue"
	scheme                         string // as written, for a URL
	host, port, user, dbname       string
	password                       string
	hasPassword                    bool
	params                         []param // every other parameter, in the order written
	applicationName, fallbackAppNm string
}

type param struct{ key, value string }

// unsupportedPGParams are libpq parameters the PostgreSQL driver cannot honour; naming
// one is refused rather than silently ignored.
var unsupportedPGParams = []string{
	"hostaddr", "passfile", "options", "service", "target_session_attrs", "load_balance_hosts",
	"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
	"replication", "gssencmode", "gsslib", "krbsrvname", "gssdelegation", "channel_binding",
	"require_auth", "sslpassword", "sslcertmode", "sslnegotiation", "sslcompression", "sslcrl",
	"sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version",
	"client_encoding",
}

var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

var pgTimeoutParams = []string{"connect_timeout", "timeout", "dial_timeout", "read_timeout", "write_timeout"}

// runtimeParam is the shape of a server setting the driver sends with SET.
var runtimeParam = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// parsePostgresDSN reads either form. On error the result still holds whatever was read
// (the password in particular, so that it can be kept out of messages).
func parsePostgresDSN(dsn string) (pgConn, error) {
	s := strings.TrimSpace(dsn)
	if s == "" {
		return pgConn{}, badDSN("is empty")
	}
	if scheme, rest, ok := cutScheme(s); ok {
		c, err := readURL(scheme, rest, userInfoEnd(rest))
		if last := strings.LastIndexByte(rest, '@'); err != nil && last != userInfoEnd(rest) {
			// A raw '?' and '@' both in a password: try the user info up to the last '@'.
			if alt, altErr := readURL(scheme, rest, last); altErr == nil {
				return alt, nil
			}
		}
		return c, err
	}
	if strings.Contains(s, "://") || !strings.Contains(s, "=") {
		return pgConn{}, badDSN("want a postgres:// or postgresql:// URL, or key=value pairs")
	}
	c := pgConn{form: "keyvalue"}
	err := c.readKeyValues(s)
	if err == nil {
		err = c.check()
	}
	return c, err
}

func cutScheme(s string) (scheme, rest string, ok bool) {
	for _, p := range []string{"postgres://", "postgresql://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[:len(p)-3], s[len(p):], true
		}
	}
	return "", "", false
}

// readURL reads what follows the scheme, with the user info ending at index at (none
// when -1), and checks it. Percent-encoding is decoded where it is valid; a password
// pasted without it may still hold ' ', '#', ':', '/', '?' and '@' (see userInfoEnd).
func readURL(scheme, rest string, at int) (pgConn, error) {
	c := pgConn{form: "url", scheme: scheme}
	err := c.readURLParts(rest, at)
	if err == nil {
		err = c.check()
	}
	return c, err
}

func (c *pgConn) readURLParts(rest string, at int) error {
	if at >= 0 {
		user, password, has := strings.Cut(rest[:at], ":")
		c.user, c.password, c.hasPassword = driver.Unescape(user), driver.Unescape(password), has
		rest = rest[at+1:]
	}
	hostEnd := strings.IndexAny(rest, "/?")
	if hostEnd < 0 {
		hostEnd = len(rest)
	}
	if err := c.readHostPort(rest[:hostEnd]); err != nil {
		return err
	}
	rest = rest[hostEnd:]
	if strings.HasPrefix(rest, "/") {
		end := strings.IndexByte(rest, '?')
		if end < 0 {
			end = len(rest)
		}
		c.dbname, rest = driver.Unescape(rest[1:end]), rest[end:]
	}
	query := strings.TrimPrefix(rest, "?")
	for i, kv := range strings.Split(query, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		if k == "" {
			return badDSN("query parameter %d has no name", i+1)
		}
		if err := c.set(driver.Unescape(k), driver.Unescape(v)); err != nil {
			return err
		}
	}
	return nil
}

// userInfoEnd is the index of the '@' that ends the user info, or -1. It is the last '@'
// before the query; when the query's start is unclear (a raw '?' in a password), the
// last '@' of all, unless what precedes the '?' already looks like host/dbname.
func userInfoEnd(rest string) int {
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		return strings.LastIndexByte(rest, '@')
	}
	if at := strings.LastIndexByte(rest[:q], '@'); at >= 0 {
		return at
	}
	if strings.Contains(rest[:q], "/") {
		return -1
	}
	return strings.LastIndexByte(rest, '@')
}

func (c *pgConn) readHostPort(hp string) error {
	if hp == "" {
		return nil
	}
	if strings.Contains(hp, ",") {
		return badDSN("lists several hosts; the driver connects to one")
	}
	host, port := hp, ""
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return badDSN("the host's '[' has no closing ']'")
		}
		host, port = hp[1:end], hp[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return badDSN("want ':port' after the bracketed host")
		}
		port = strings.TrimPrefix(port, ":")
	} else if i := strings.LastIndexByte(hp, ':'); i >= 0 {
		host, port = hp[:i], hp[i+1:]
		if strings.Contains(host, ":") {
			return badDSN("the host has more than one ':' (write an IPv6 address in brackets; percent-encode a ':' in the user name)")
		}
	}
	c.host, c.port = driver.Unescape(host), port
	if strings.ContainsFunc(c.host, unicode.IsControl) {
		return badDSN("the host holds a control character")
	}
	return nil
}

// readKeyValues reads libpq's key=value form: pairs separated by spaces, a value in
// single quotes when it holds spaces, with \' and \\ inside.
func (c *pgConn) readKeyValues(s string) error {
	for n := 1; ; n++ {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return nil
		}
		eq := strings.IndexAny(s, "= \t\r\n")
		if eq <= 0 || s[eq] != '=' && !strings.HasPrefix(strings.TrimLeft(s[eq:], " \t\r\n"), "=") {
			return badDSN("pair %d is not key=value (quote a value that holds spaces: password='a b')", n)
		}
		key := s[:eq]
		s = strings.TrimLeft(strings.TrimLeft(s[eq:], " \t\r\n")[1:], " \t\r\n")
		value, rest, err := keyValue(s)
		if err != nil {
			if key == "password" {
				c.password, c.hasPassword = value, true // kept out of messages all the same
			}
			return badDSN("%s: %v", key, err)
		}
		if err := c.set(key, value); err != nil {
			return err
		}
		s = rest
	}
}

// keyValue reads one value from the front of s.
func keyValue(s string) (value, rest string, err error) {
	var b strings.Builder
	if strings.HasPrefix(s, "'") {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if i+1 < len(s) {
					i++
					b.WriteByte(s[i])
				}
			case '\'':
				return b.String(), s[i+1:], nil
			default:
				b.WriteByte(s[i])
			}
		}
		return b.String(), "", errors.New("the quoted value has no closing quote")
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n':
			return b.String(), s[i:], nil
		case '\\':
			if i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), "", nil
}

// set applies one parameter; a later one wins, as with libpq.
func (c *pgConn) set(key, value string) error {
	switch key {
	case "host":
		if strings.Contains(value, ",") {
			return badDSN("host lists several hosts; the driver connects to one")
		}
		c.host = value
	case "port":
		c.port = value
	case "user":
		c.user = value
	case "password":
		c.password, c.hasPassword = value, true
	case "dbname":
		c.dbname = value
	case "application_name":
		c.applicationName = value
	case "fallback_application_name":
		c.fallbackAppNm = value
	default:
		for i, p := range c.params {
			if p.key == key {
				c.params = append(c.params[:i], c.params[i+1:]...)
				break
			}
		}
		c.params = append(c.params, param{key, value})
	}
	return nil
}

// check refuses values the driver could not use.
func (c *pgConn) check() error {
	if c.port != "" {
		if n, err := strconv.Atoi(c.port); err != nil || n < 1 || n > 65535 {
			return badDSN("the port is not a number from 1 to 65535")
		}
	}
	if strings.ContainsAny(c.host, " \t\r\n") {
		return badDSN("the host holds a space (percent-encode special characters of the user name and password)")
	}
	for _, p := range c.params {
		switch {
		case slices.Contains(unsupportedPGParams, p.key):
			return badDSN("parameter %s is not supported by the PostgreSQL driver", p.key)
		case p.key == "sslmode" && !slices.Contains(sslModes, p.value):
			return badDSN("sslmode must be one of %s", strings.Join(sslModes, ", "))
		case slices.Contains(pgTimeoutParams, p.key):
			if !validTimeout(p.value) {
				return badDSN("%s must be a whole number of seconds (or a duration such as 5s)", p.key)
			}
		case !runtimeParam.MatchString(p.key):
			return badDSN("a parameter name holds characters other than letters, digits, '_' and '.'")
		}
	}
	return nil
}

func validTimeout(s string) bool {
	if _, err := strconv.Atoi(s); err == nil {
		return true
	}
	_, err := time.ParseDuration(s)
	return err == nil
}

// driverURL writes c as a URL for the PostgreSQL driver, every part escaped, so the
// driver's own parser reads exactly what c holds.
func (c pgConn) driverURL() string {
	port := c.port
	if port == "" {
		port = "5432"
	}
	u := url.URL{Scheme: "postgres"}
	q := url.Values{}
	switch {
	case strings.HasPrefix(c.host, "/"):
		q.Set("host", socketPath(c.host, port))
	case c.host != "":
		u.Host = net.JoinHostPort(c.host, port)
	case c.port != "":
		u.Host = net.JoinHostPort("localhost", port)
	}
	user := c.user
	if user == "" && c.hasPassword {
		user = defaultPGUser()
	}
	switch {
	case c.hasPassword:
		u.User = url.UserPassword(user, c.password)
	case user != "":
		u.User = url.User(user)
	}
	if c.dbname != "" {
		u.Path = "/" + c.dbname
	}
	if name := c.applicationName; name != "" || c.fallbackAppNm != "" {
		if name == "" {
			name = c.fallbackAppNm
		}
		q.Set("application_name", name)
	}
	for _, p := range c.params {
		q.Set(p.key, p.value)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// socketPath turns libpq's socket directory into the socket itself.
func socketPath(dir, port string) string {
	if strings.Contains(dir, ".s.PGSQL.") {
		return dir
	}
	return strings.TrimSuffix(dir, "/") + "/.s.PGSQL." + port
}

func defaultPGUser() string {
	if u := os.Getenv("PGUSER"); u != "" {
		return u
	}
	return "postgres"
}

// postgresConnector parses dsn and returns the driver's connector for it. It never
// panics: the driver's own checks (a root certificate that does not load, say) come
// back as an ErrBadDSN with any password removed.
func postgresConnector(dsn string, extra ...pgdriver.Option) (conn *pgdriver.Connector, err error) {
	c, err := parsePostgresDSN(dsn)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			conn, err = nil, badDSN("%s", Driver{}.RedactText(fmt.Sprint(r), dsn))
		}
	}()
	return pgdriver.NewConnector(append([]pgdriver.Option{pgdriver.WithDSN(c.driverURL())}, extra...)...), nil
}
