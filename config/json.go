package config

import (
	"errors"
	"fmt"

	"github.com/knadh/koanf/parsers/json"

	"github.com/mcp-hub/mcp-hub/clientconfig"
)

// jsonParser is koanf's JSON parser whose syntax errors say the line and
// column where the parser gave up, as clientconfig reports them for
// clients' config files.
type jsonParser struct{}

// Unmarshal parses a JSON config file.
func (jsonParser) Unmarshal(b []byte) (map[string]any, error) {
	m, err := json.Parser().Unmarshal(b)
	if err == nil {
		return m, nil
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
