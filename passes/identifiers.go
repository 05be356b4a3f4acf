package passes

import (
	"regexp"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// identifierPattern is what a table or column name from configuration may look like: a
// plain SQL identifier, optionally qualified by a schema. Nothing else (quotes,
// semicolons, spaces, comments) ever reaches a statement.
var identifierPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

// checkIdentifier returns a problem with name as an identifier, or "".
func checkIdentifier(name string) string {
	switch {
	case name == "":
		return "is empty"
	case !identifierPattern.MatchString(name):
		return "is not a plain identifier (letters, digits and _, optionally schema.name): " + quoteForMessage(name)
	}
	return ""
}

func quoteForMessage(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}

// ident quotes a checked identifier for the database at hand; a qualified name is quoted
// part by part.
func ident(name string) schema.QueryAppender {
	if schemaName, table, ok := strings.Cut(name, "."); ok {
		return bun.SafeQuery("?.?", bun.Ident(schemaName), bun.Ident(table))
	}
	return bun.Ident(name)
}
