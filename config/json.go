package config

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/knadh/koanf/parsers/json"
	"github.com/tailscale/hujson"

	"github.com/mcp-hub/mcp-hub/clientconfig"
)

// jsonParser is koanf's JSON parser whose syntax errors say the line and
// column where the parser gave up, as clientconfig reports them for
// clients' config files. It reads JSON with comments and trailing commas
// (HuJSON, as VS Code's mcp.json is written), as import does: a client's
// file is a config file as it is.
type jsonParser struct{}

// hujsonErrRE splits hujson's syntax errors: "hujson: line 3, column 8:
// invalid literal: warn".
var hujsonErrRE = regexp.MustCompile(`^hujson: (line \d+, column \d+): (.*)$`)

// Unmarshal parses a JSON config file.
func (jsonParser) Unmarshal(b []byte) (map[string]any, error) {
	// Standardize blanks comments and trailing commas out in place,
	// keeping every offset, so an error still names the line and column
	// of the file.
	std, herr := hujson.Standardize(bytes.Clone(b))
	if herr == nil {
		b = std
	}
	m, err := json.Parser().Unmarshal(b)
	if err == nil {
		return m, nil
	}
	// A file with comments and a mistake: the plain parser stops at the
	// first comment, hujson at the mistake.
	var jse *stdjson.SyntaxError
	if errors.As(err, &jse) && herr != nil && jse.Offset > 0 && jse.Offset <= int64(len(b)) && b[jse.Offset-1] == '/' {
		if p := hujsonErrRE.FindStringSubmatch(herr.Error()); p != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %s", p[1], p[2])
		}
	}
	var se *clientconfig.SyntaxError
	if errors.As(clientconfig.JSONError("", b, err), &se) {
		return nil, fmt.Errorf("line %d, column %d: invalid JSON: %w", se.Line, se.Column, se.Err)
	}
	return nil, err
}

// Marshal encodes a config map as JSON.
func (jsonParser) Marshal(m map[string]any) ([]byte, error) {
	return json.Parser().Marshal(m)
}
