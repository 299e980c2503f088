package hub

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Arguments of the hub_* tools (and the bodies of the REST API) are checked
// against the tool's input schema by jsonschema-go. Each schema is resolved
// once. When a call does not validate, the failing field is found by
// validating each argument against its own (resolved) property schema, and
// the message says what the field must be, in the field's words.

// reservedNamePattern matches the names upstream.ValidName reserves for
// the hub, in a pattern any JSON Schema validator reads.
const reservedNamePattern = "^[Hh][Uu][Bb](_.*)?$"

// argSchema is one tool's input schema (or an object property's schema),
// resolved.
type argSchema struct {
	whole *jsonschema.Resolved
	props map[string]*jsonschema.Resolved
	info  *jsonschema.Schema
	// nested are the properties that are objects with properties of their
	// own (oauth), so a message can name the member that is wrong.
	nested map[string]*argSchema
}

var argSchemas sync.Map // canonical JSON of a schema → *argSchema

// schemaOf returns the resolved form of schema, resolving it on first use.
func schemaOf(schema map[string]any) (*argSchema, error) {
	raw, err := json.Marshal(schema) // map keys sorted: one key per schema
	if err != nil {
		return nil, err
	}
	if a, ok := argSchemas.Load(string(raw)); ok {
		return a.(*argSchema), nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	a, err := resolveArgs(&s)
	if err != nil {
		return nil, err
	}
	argSchemas.Store(string(raw), a)
	return a, nil
}

// resolveArgs resolves s, each of its properties, and the properties of
// the properties that are objects with properties.
func resolveArgs(s *jsonschema.Schema) (*argSchema, error) {
	a := &argSchema{info: s, props: map[string]*jsonschema.Resolved{}, nested: map[string]*argSchema{}}
	var err error
	if a.whole, err = s.Resolve(nil); err != nil {
		return nil, err
	}
	for name, p := range s.Properties {
		if a.props[name], err = p.Resolve(nil); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if p.Type == "object" && len(p.Properties) > 0 {
			if a.nested[name], err = resolveArgs(p); err != nil {
				return nil, fmt.Errorf("%s.%w", name, err)
			}
		}
	}
	return a, nil
}

// decodeArgs checks arguments against an admin tool's input schema: only
// known fields, required ones present, each of its declared type. Errors
// name the field.
func decodeArgs(raw json.RawMessage, schema map[string]any) (map[string]json.RawMessage, error) {
	a, err := schemaOf(schema)
	if err != nil {
		return nil, fmt.Errorf("the tool's input schema: %w", err) // static data: cannot happen
	}
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, fmt.Errorf("arguments must be an object: %v", err)
		}
	}
	inst := make(map[string]any, len(args))
	for k, v := range args {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		if x != nil { // null means not given, as it always did
			inst[k] = x
		}
	}
	if err := a.whole.Validate(inst); err != nil {
		return nil, a.explain("", inst, err)
	}
	return args, nil
}

// explain names the first field (by name) that fails, and what it must be;
// a member of an object field is named as field.member. prefix is the
// name of the object inst is the value of, with a dot ("oauth.").
func (a *argSchema) explain(prefix string, inst map[string]any, err error) error {
	for _, k := range slices.Sorted(maps.Keys(inst)) {
		p, ok := a.props[k]
		if !ok {
			return fmt.Errorf("%s%s: unknown field (known: %s)", prefix, k, strings.Join(slices.Sorted(maps.Keys(a.props)), ", "))
		}
		if p.Validate(inst[k]) == nil {
			continue
		}
		if n, ok := a.nested[k]; ok {
			if m, isObj := inst[k].(map[string]any); isObj {
				return n.explain(prefix+k+".", m, err)
			}
		}
		info := a.info.Properties[k]
		if s, isStr := inst[k].(string); isStr && info.Type == "string" {
			if len(info.Enum) > 0 {
				return fmt.Errorf("%s%s: must be one of %s, got %q", prefix, k, joinAny(info.Enum), s)
			}
			if info.Pattern == upstream.NamePattern {
				if e := upstream.ValidName(s); e != nil {
					return fmt.Errorf("%s%s: %v", prefix, k, e)
				}
			}
		}
		what := map[string]string{"string": "a string", "boolean": "true or false", "array": "an array of strings", "object": "an object of strings", "integer": "an integer"}[info.Type]
		switch {
		case info.Type == "object" && len(info.Properties) > 0:
			what = "an object"
		case info.Type == "integer" && info.Minimum != nil && info.Maximum != nil:
			what = fmt.Sprintf("an integer from %v to %v", *info.Minimum, *info.Maximum)
		}
		if what == "" {
			return fmt.Errorf("%s%s: %v", prefix, k, err)
		}
		return fmt.Errorf("%s%s: must be %s", prefix, k, what)
	}
	for _, k := range a.info.Required {
		if _, ok := inst[k]; !ok {
			return fmt.Errorf("%s%s: required", prefix, k)
		}
	}
	return fmt.Errorf("arguments: %v", err)
}

func joinAny(vs []any) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprint(v)
	}
	return strings.Join(s, ", ")
}
