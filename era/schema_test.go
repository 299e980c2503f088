package era

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The JSON Schemas of the two revisions the hub speaks, as the
// specification publishes them (testdata/README.md says where from).
// Every translation is checked against them: what goes in valid for one
// revision comes out valid for the other.

var schemas sync.Map // version → map[string]json.RawMessage ($defs)

func defs(t *testing.T, version string) map[string]json.RawMessage {
	t.Helper()
	if d, ok := schemas.Load(version); ok {
		return d.(map[string]json.RawMessage)
	}
	b, err := os.ReadFile(filepath.Join("testdata", version+".schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	schemas.Store(version, doc.Defs)
	return doc.Defs
}

// validate reports whether instance (raw JSON) is a valid def of version's
// schema; the error says why not.
var resolved sync.Map // version+"#"+def → *jsonschema.Resolved

func validate(t *testing.T, version, def string, instance []byte) error {
	t.Helper()
	var v any
	if err := json.Unmarshal(instance, &v); err != nil {
		t.Fatalf("instance is not JSON: %v: %s", err, instance)
	}
	if rs, ok := resolved.Load(version + "#" + def); ok {
		return rs.(*jsonschema.Resolved).Validate(v)
	}
	d := defs(t, version)
	if _, ok := d[def]; !ok {
		t.Fatalf("schema %s has no definition %s", version, def)
	}
	root, err := json.Marshal(map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$defs":   d,
		"$ref":    "#/$defs/" + def,
	})
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(root, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	resolved.Store(version+"#"+def, rs)
	return rs.Validate(v)
}

func mustValid(t *testing.T, version, def string, instance []byte) {
	t.Helper()
	if err := validate(t, version, def, instance); err != nil {
		t.Errorf("not a valid %s %s: %v\n%s", version, def, err, instance)
	}
}

func mustInvalid(t *testing.T, version, def string, instance []byte) {
	t.Helper()
	if validate(t, version, def, instance) == nil {
		t.Errorf("unexpectedly a valid %s %s:\n%s", version, def, instance)
	}
}

// TestSchemaHarness checks the harness itself can fail: a session-era
// result is not a valid stateless-era one.
func TestSchemaHarness(t *testing.T) {
	res := []byte(`{"content":[{"type":"text","text":"hi"}]}`)
	mustValid(t, "2025-11-25", "CallToolResult", res)
	mustInvalid(t, "2026-07-28", "CallToolResult", res)
	mustInvalid(t, "2026-07-28", "ListToolsResult", []byte(`{"resultType":"complete","tools":[]}`))
}
