package driver

import (
	"net/url"
	"slices"
	"strings"
)

// Redactor makes a DSN, and text that may quote one, fit to show. Each driver reads only
// its own DSN forms: the kind of a DSN is the driver's, never guessed from its shape, so
// a password in a form one driver does not know is not shown by mistake.
type Redactor interface {
	// RedactDSN returns dsn with every secret replaced by Redacted; a DSN whose secrets
	// cannot be located for sure is not shown at all.
	RedactDSN(dsn string) string
	// RedactText removes from text every secret dsn holds, as written and in the escaped
	// forms a URL may carry it, for an error message that might quote one.
	RedactText(text, dsn string) string
}

// Redacted replaces a secret in every rendering of a DSN.
const Redacted = "xxxxx"

// IsSecretParam reports whether a DSN parameter holds a secret: a name that speaks of a
// password, secret, token or key, or an encryption key pragma.
func IsSecretParam(key, value string) bool {
	k := strings.ToLower(key)
	if strings.Contains(k, "pass") || strings.Contains(k, "secret") || strings.Contains(k, "token") || k == "key" {
		return true
	}
	v := strings.ToLower(value)
	return k == "_pragma" && (strings.HasPrefix(v, "key") || strings.HasPrefix(v, "rekey") || strings.HasPrefix(v, "hexkey"))
}

// QuerySecrets lists the values of the secret parameters of a DSN's query ("?a=b&c=d"),
// as written and unescaped.
func QuerySecrets(dsn string) []string {
	var out []string
	if _, query, ok := strings.Cut(dsn, "?"); ok {
		for _, kv := range strings.Split(query, "&") {
			if k, v, _ := strings.Cut(kv, "="); IsSecretParam(Unescape(k), Unescape(v)) && v != "" {
				out = append(out, v, Unescape(v))
			}
		}
	}
	return out
}

// RedactSecrets replaces in text every secret, as written and in the escaped forms a URL
// may carry it; the longest go first, so a secret that holds another is replaced whole.
func RedactSecrets(text string, secrets []string) string {
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, secret := range slices.Compact(secrets) {
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), strings.TrimPrefix(url.UserPassword("", secret).String(), ":")} {
			if form != "" {
				text = strings.ReplaceAll(text, form, Redacted)
			}
		}
	}
	return text
}

// Unescape percent-decodes s, or returns it as written when it is not valid
// percent-encoding (a raw "100%" in a password).
func Unescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
