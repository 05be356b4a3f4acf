package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlLinePrefix is how the YAML parser leads its messages: "yaml: line 6: ".
var yamlLinePrefix = regexp.MustCompile(`^yaml: (line \d+: )?`)

// maxSyntaxScanLines bounds the search for a syntax error's line (see syntaxError),
// which parses the file once per line (about a second at this bound); a longer file
// keeps the parser's own line.
const maxSyntaxScanLines = 1000

// syntaxError is the parser's error for raw as "line N: bad YAML: ...". The parser's
// own line is where the construct it was reading began, counted from 0 for most
// errors (a '[' left open on line 7 is reported at line 6, a key indented wrongly on
// line 7 at line 4); N is instead the first line by which the file can no longer be
// read the same way: the shortest run of its first lines that fails with the same
// message.
func syntaxError(raw []byte, err error) error {
	msg := yamlLinePrefix.ReplaceAllString(err.Error(), "")
	if line := firstFailingLine(raw, msg); line > 0 {
		return fmt.Errorf("line %d: bad YAML: %s", line, msg)
	}
	if m := yamlLinePrefix.FindString(err.Error()); m != "" && m != "yaml: " {
		return fmt.Errorf("%sbad YAML: %s", strings.TrimPrefix(m, "yaml: "), msg)
	}
	return fmt.Errorf("bad YAML: %s", msg)
}

// firstFailingLine is the smallest n such that the first n lines of raw fail to parse
// with msg, or 0.
func firstFailingLine(raw []byte, msg string) int {
	lines := bytes.SplitAfter(raw, []byte("\n"))
	if len(lines) > maxSyntaxScanLines {
		return 0
	}
	for n := 1; n <= len(lines); n++ {
		var doc yaml.Node
		err := yaml.NewDecoder(bytes.NewReader(bytes.Join(lines[:n], nil))).Decode(&doc)
		if err != nil && yamlLinePrefix.ReplaceAllString(err.Error(), "") == msg {
			return n
		}
	}
	return 0
}
