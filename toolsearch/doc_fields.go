package toolsearch

import (
	"encoding/json"
	"slices"
	"strings"
)

// field is a part of a tool's text, scored with its own weight.
type field uint8

const (
	fName       field = iota // the tool's name, split into words
	fTitle                   // title and annotations.title
	fDesc                    // description
	fParamName               // input schema property names, split into words
	fParamDesc               // input schema property descriptions, titles and enum values
	fServer                  // the server's name
	fServerDesc              // the server's description and instructions
	nFields
)

// toolParts reads the text fields of a tool definition (an MCP Tool
// object). Unknown members are ignored; a definition that is not an object
// gives only its name.
func toolParts(raw json.RawMessage) (title, description string, schema json.RawMessage) {
	var t struct {
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations struct {
			Title string `json:"title"`
		} `json:"annotations"`
	}
	_ = json.Unmarshal(raw, &t)
	title = t.Title
	if title == "" {
		title = t.Annotations.Title
	}
	return title, t.Description, t.InputSchema
}

// schemaText returns the property names of an input schema (nested ones
// too: properties of objects, of array items, of anyOf/oneOf/allOf
// branches and of $defs) and their descriptions, titles and string enum
// values, each joined by newlines.
func schemaText(schema json.RawMessage) (names, descs string) {
	if len(schema) == 0 {
		return "", ""
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return "", ""
	}
	var nb, db strings.Builder
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > 8 {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			slices.Sort(keys) // the same text whatever the map order
			for _, k := range keys {
				nb.WriteString(k)
				nb.WriteByte('\n')
				p, _ := props[k].(map[string]any)
				for _, key := range []string{"description", "title"} {
					if s, ok := p[key].(string); ok {
						db.WriteString(s)
						db.WriteByte('\n')
					}
				}
				if e, ok := p["enum"].([]any); ok {
					for _, x := range e {
						if s, ok := x.(string); ok {
							db.WriteString(s)
							db.WriteByte('\n')
						}
					}
				}
				walk(p, depth+1)
			}
		}
		if it, ok := m["items"]; ok {
			walk(it, depth+1)
		}
		for _, key := range []string{"anyOf", "oneOf", "allOf"} {
			if bs, ok := m[key].([]any); ok {
				for _, b := range bs {
					walk(b, depth+1)
				}
			}
		}
		for _, key := range []string{"$defs", "definitions"} {
			if defs, ok := m[key].(map[string]any); ok {
				keys := make([]string, 0, len(defs))
				for k := range defs {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					walk(defs[k], depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return nb.String(), db.String()
}
