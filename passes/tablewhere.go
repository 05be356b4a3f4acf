package passes

import (
	"fmt"
	"strings"
)

// checkWhere returns what is wrong with a where condition as text, or "". The condition
// is pasted into every statement inside parentheses, so what it must never do is leave
// them: it must not contain a statement separator, a comment (which could swallow the
// closing parenthesis), or a parenthesis that closes one it did not open, and every
// parenthesis, string literal and quoted identifier it opens must be closed.
//
// The scan reads '...' string literals and "..." quoted identifiers (a doubled quote
// stays inside) the way both databases do, and refuses what the two read differently
// from that: a backslash inside a string literal (PostgreSQL's E'...' strings escape
// with it), and, outside quotes, $ (PostgreSQL's dollar quoting), backticks and square
// brackets (SQLite's other identifier quotes). Whether the text is a boolean expression
// over the table only the database can tell: ValidateStartup asks it.
func checkWhere(where string) string {
	if strings.TrimSpace(where) == "" {
		return "is blank"
	}
	depth := 0
	for i := 0; i < len(where); i++ {
		c := where[i]
		switch {
		case c == '\'' || c == '"':
			end, problem := skipQuoted(where, i)
			if problem != "" {
				return problem
			}
			i = end
		case c == ';':
			return "must be one expression: ';' separates statements"
		case c == '-' && i+1 < len(where) && where[i+1] == '-', c == '/' && i+1 < len(where) && where[i+1] == '*':
			return "must not contain a comment (" + where[i:i+2] + ")"
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return fmt.Sprintf("closes a parenthesis it did not open (at character %d)", i+1)
			}
		case c == '$' || c == '`' || c == '[' || c == ']':
			return fmt.Sprintf("must not contain %q outside quotes (dollar quoting, or identifier quotes only one database reads)", c)
		case c == 0:
			return "must not contain a NUL character"
		}
	}
	if depth > 0 {
		return fmt.Sprintf("leaves %d parenthesis(es) open", depth)
	}
	return ""
}

// skipQuoted returns the index of the quote that closes the literal or identifier
// opening at start, or a problem.
func skipQuoted(s string, start int) (int, string) {
	q := s[start]
	for i := start + 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q == '\'':
			return 0, "must not contain a backslash in a string literal (PostgreSQL's E'...' strings read it as an escape)"
		case s[i] == 0:
			return 0, "must not contain a NUL character"
		case s[i] != q:
		case i+1 < len(s) && s[i+1] == q:
			i++ // a doubled quote stays inside
		default:
			return i, ""
		}
	}
	if q == '\'' {
		return 0, "leaves a string literal ('...') open"
	}
	return 0, `leaves a quoted identifier ("...") open`
}
