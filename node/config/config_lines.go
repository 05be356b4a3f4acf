package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/retentionkit/retention/core"
)

// LineOf is "line N: " for the field at path (database.replicas[0]), for a check made
// after loading (one that needs the database) to lead its message with the line the
// way Validate's do; "" when the file has no such field or the config was not read
// from a file.
func (c *Config) LineOf(path string) string { return c.lineOf(path) }

// lineOf is "line N: " for the field at path (passes[0].batch_size), or for the nearest
// enclosing entry the file has (a field left out is reported at its pass), or "".
func (c *Config) lineOf(path string) string {
	for p := path; p != ""; p = parentPath(p) {
		if n, ok := c.lines[p]; ok {
			return fmt.Sprintf("line %d: ", n)
		}
	}
	return ""
}

// parentPath is path without its last field or index.
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i <= 0 {
		return ""
	}
	return path[:i]
}

// passErrors splits the validation errors of pass i into one error per message, each
// led by the line of the field it is about. A pass without a name is called passes[i]
// (its place in the list), not pass "".
func (c *Config) passErrors(i int, name string, err error) []error {
	entry := fmt.Sprintf("passes[%d]", i)
	who := func(msg string) string {
		if name != "" {
			return msg
		}
		return strings.ReplaceAll(msg, `pass "": `, entry+": ")
	}
	var out []error
	for _, e := range flatten(err) {
		var ve *core.ValidationError
		if !errors.As(e, &ve) || len(ve.Fields) == 0 {
			out = append(out, errors.New(c.lineOf(entry)+who(e.Error())))
			continue
		}
		for _, field := range slices.Sorted(maps.Keys(ve.Fields)) {
			at := c.lineOf(entry + "." + field)
			for _, msg := range ve.Fields[field] {
				out = append(out, errors.New(at+who(msg)))
			}
		}
	}
	return out
}

// sectionErrors splits err into one error per message, each led by the line of the
// field its message starts with (metadata_cleanup.names[1].name is empty), or of
// section when it names none the file has.
func (c *Config) sectionErrors(section string, err error) []error {
	var out []error
	for _, e := range flatten(err) {
		msg := e.Error()
		path, _, _ := strings.Cut(msg, " ")
		path = strings.TrimSuffix(path, ":")
		if !strings.HasPrefix(path, section) {
			path = section
		}
		out = append(out, fmt.Errorf("%s%w", c.lineOf(path), e))
	}
	return out
}

// flatten lists the errors an errors.Join holds (err itself otherwise).
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// sortByLine orders errs by the line each one leads with ("line N: "), so a file's
// problems read from top to bottom whatever order the checks ran in; errors that name
// no line (a section missing from the file) come first, and errors on one line keep
// their order.
func sortByLine(errs []error) {
	slices.SortStableFunc(errs, func(a, b error) int { return leadingLine(a) - leadingLine(b) })
}

// leadingLine is N of an error that reads "line N: ...", or 0.
func leadingLine(err error) int {
	rest, ok := strings.CutPrefix(err.Error(), "line ")
	if !ok {
		return 0
	}
	digits, _, ok := strings.Cut(rest, ": ")
	n, convErr := strconv.Atoi(digits)
	if !ok || convErr != nil {
		return 0
	}
	return n
}
