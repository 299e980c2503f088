package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	goyaml "github.com/goccy/go-yaml"
	"github.com/knadh/koanf/parsers/yaml"
)

// yamlParser is koanf's YAML parser whose syntax errors say the line and
// column where the file goes wrong. koanf's parser (go.yaml.in/yaml/v3)
// reports the line where the enclosing block began, not where the mistake
// is: a key indented one space too few on line 5 is "yaml: line 1: did not
// find expected key". A file it refuses is parsed again with
// github.com/goccy/go-yaml, whose errors carry the position of the token
// at fault; the settings still come from koanf's parser alone.
type yamlParser struct{}

// Unmarshal parses a YAML config file.
func (yamlParser) Unmarshal(b []byte) (map[string]any, error) {
	m, err := yaml.Parser().Unmarshal(b)
	if err == nil {
		return m, nil
	}
	if where := yamlErrorAt(b); where != nil {
		return nil, where
	}
	return nil, err
}

// Marshal encodes a config map as YAML.
func (yamlParser) Marshal(m map[string]any) ([]byte, error) {
	return yaml.Parser().Marshal(m)
}

// yamlErrorAt returns the syntax error of b with its line and column, and
// what usually causes it, or nil when goccy/go-yaml finds none (the two
// parsers disagree; the caller keeps its own error).
func yamlErrorAt(b []byte) error {
	var v any
	err := goyaml.Unmarshal(b, &v)
	var ye goyaml.Error
	if err == nil || !errors.As(err, &ye) || ye.GetToken() == nil {
		return nil
	}
	pos := ye.GetToken().Position
	msg := fmt.Sprintf("line %d, column %d: invalid YAML: %s", pos.Line, pos.Column, ye.GetMessage())
	lines := strings.Split(string(b), "\n")
	if pos.Line < 1 || pos.Line > len(lines) {
		return errors.New(msg)
	}
	line := lines[pos.Line-1]
	indent := len(line) - len(strings.TrimLeft(line, " "))
	switch {
	case strings.HasPrefix(strings.TrimLeft(line, " "), "\t"):
		msg += " (YAML indents with spaces; this line has a tab)"
	case pos.Column == indent+1 && indent < prevIndent(lines[:pos.Line-1]) && !linesUp(lines[:pos.Line-1], indent):
		msg += fmt.Sprintf(" (it is indented %d %s, like no line above it: the keys of one map, and the items of one list, line up)",
			indent, plural(indent, "space", "spaces"))
	}
	return errors.New(msg)
}

// prevIndent is the indentation of the last of the lines that is neither
// blank nor a comment (0 when there is none).
func prevIndent(lines []string) int {
	for _, l := range slices.Backward(lines) {
		if t := strings.TrimLeft(l, " "); t != "" && !strings.HasPrefix(t, "#") {
			return len(l) - len(t)
		}
	}
	return 0
}

// linesUp reports whether one of the lines (blank and comment lines aside)
// is indented by indent spaces.
func linesUp(lines []string, indent int) bool {
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if len(l)-len(t) == indent {
			return true
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
