package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkKey verifies that the stored key offsets point at the key's JSON
// string inside Raw.
func checkKey(t *testing.T, it Item) {
	t.Helper()
	if !it.valid(it.Kind) {
		t.Fatalf("item %q: bad key offsets %d..%d in %s", it.Key, it.keyStart, it.keyEnd, it.Raw)
	}
	var s string
	if err := json.Unmarshal(it.Raw[it.keyStart:it.keyEnd], &s); err != nil || s != it.Key {
		t.Fatalf("item %q: Raw[%d:%d] = %s (%v)", it.Key, it.keyStart, it.keyEnd, it.Raw[it.keyStart:it.keyEnd], err)
	}
	if !json.Valid(it.Raw) {
		t.Fatalf("item %q: invalid JSON %s", it.Key, it.Raw)
	}
}

func TestParseToolSchema(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  string // "" = unchanged
		fixes []string
	}{
		{
			name:  "missing",
			in:    `{"name":"a","description":"d"}`,
			want:  `{"name":"a","description":"d","inputSchema":{"type":"object"}}`,
			fixes: []string{`inputSchema: missing; set to {"type":"object"}`},
		},
		{
			name:  "missing, name last, whitespace",
			in:    "{ \"x\" : 1 ,\n \"name\" : \"a\" \n}",
			want:  "{ \"x\" : 1 ,\n \"name\" : \"a\",\"inputSchema\":{\"type\":\"object\"} \n}",
			fixes: []string{`inputSchema: missing; set to {"type":"object"}`},
		},
		{
			name:  "null",
			in:    `{"name":"a","inputSchema":null,"z":true}`,
			want:  `{"name":"a","inputSchema":{"type":"object"},"z":true}`,
			fixes: []string{`inputSchema: null; replaced with {"type":"object"}`},
		},
		{
			name:  "array before name",
			in:    `{"inputSchema":[1,2,{"a":"]"}],"name":"a"}`,
			want:  `{"inputSchema":{"type":"object"},"name":"a"}`,
			fixes: []string{`inputSchema: an array is not an object; replaced with {"type":"object"}`},
		},
		{
			name:  "string",
			in:    `{"name":"a","inputSchema":"object"}`,
			want:  `{"name":"a","inputSchema":{"type":"object"}}`,
			fixes: []string{`inputSchema: a string is not an object; replaced with {"type":"object"}`},
		},
		{
			name:  "number",
			in:    `{"name":"a","inputSchema":-1.5e3}`,
			want:  `{"name":"a","inputSchema":{"type":"object"}}`,
			fixes: []string{`inputSchema: a number is not an object; replaced with {"type":"object"}`},
		},
		{
			name:  "boolean",
			in:    `{"name":"a","inputSchema":true}`,
			want:  `{"name":"a","inputSchema":{"type":"object"}}`,
			fixes: []string{`inputSchema: a boolean is not an object; replaced with {"type":"object"}`},
		},
		{
			name:  "empty object",
			in:    `{"inputSchema":{ },"name":"a"}`,
			want:  `{"inputSchema":{"type":"object" },"name":"a"}`,
			fixes: []string{`inputSchema: added "type":"object"`},
		},
		{
			name:  "object without type",
			in:    `{"name":"a","inputSchema":{"properties":{"type":{"type":"string"}},"required":["type"]}}`,
			want:  `{"name":"a","inputSchema":{"type":"object","properties":{"type":{"type":"string"}},"required":["type"]}}`,
			fixes: []string{`inputSchema: added "type":"object"`},
		},
		{
			name:  "type array with null",
			in:    `{"inputSchema":{"type":["object","null"],"properties":{}},"name":"a"}`,
			want:  `{"inputSchema":{"type":"object","properties":{}},"name":"a"}`,
			fixes: []string{`inputSchema: "type" was ["object","null"]; set to "object"`},
		},
		{
			name:  "type array",
			in:    `{"name":"a","inputSchema":{"properties":{},"type":"array"}}`,
			want:  `{"name":"a","inputSchema":{"properties":{},"type":"object"}}`,
			fixes: []string{`inputSchema: "type" was "array"; set to "object"`},
		},
		{
			name:  "type long value abbreviated",
			in:    `{"name":"a","inputSchema":{"type":"` + strings.Repeat("é", 30) + `"}}`,
			want:  `{"name":"a","inputSchema":{"type":"object"}}`,
			fixes: []string{`inputSchema: "type" was "` + strings.Repeat("é", 19) + `…; set to "object"`},
		},
		{
			name: "passthrough $schema $defs additionalProperties",
			in: `{"_meta":{"k":[1]},"name":"a","title":"T","inputSchema":{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type" : "object",
  "$defs": {"p": {"type": "array", "items": {"type": "string"}}},
  "properties": {"p": {"$ref": "#/$defs/p"}},
  "additionalProperties": false
},"outputSchema":{"type":"array"},"annotations":{"readOnlyHint":true},"zz":null}`,
		},
		{
			name: "escaped object is object",
			in:   `{"name":"a","inputSchema":{"type":"obj\u0065ct"}}`,
		},
		{
			name:  "escaped name",
			in:    `{"inputSchema":5,"name":"r\u00e9ad\"x\\"}`,
			want:  `{"inputSchema":{"type":"object"},"name":"r\u00e9ad\"x\\"}`,
			fixes: []string{`inputSchema: a number is not an object; replaced with {"type":"object"}`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it, err := ParseTool([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if string(it.Raw) != want {
				t.Errorf("Raw:\n got %s\nwant %s", it.Raw, want)
			}
			if diff := cmp.Diff(tc.fixes, it.Fixes); diff != "" {
				t.Errorf("Fixes (-want +got):\n%s", diff)
			}
			if it.Kind != KindTool {
				t.Errorf("Kind = %q", it.Kind)
			}
			checkKey(t, it)
		})
	}
}

func TestParseCopiesInput(t *testing.T) {
	in := []byte(`{"name":"a","inputSchema":{"type":"object"}}`)
	it, err := ParseTool(in)
	if err != nil {
		t.Fatal(err)
	}
	in[2] = 'X'
	if it.Raw[2] != 'n' {
		t.Fatal("Raw aliases the input")
	}
}

func TestParseKinds(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) (Item, error)
		in    string
		kind  Kind
		key   string
	}{
		{"prompt", ParsePrompt, `{"description":"d","name":"p1","arguments":[]}`, KindPrompt, "p1"},
		{"resource", ParseResource, `{"name":"n","uri":"file:///a b"}`, KindResource, "file:///a b"},
		{"template", ParseTemplate, `{"uriTemplate":"file:///{path}","name":"n"}`, KindTemplate, "file:///{path}"},
		{"prompt no schema added", ParsePrompt, `{"name":"p"}`, KindPrompt, "p"},
		{"unicode name", ParsePrompt, `{"name":"日本"}`, KindPrompt, "日本"},
		{"invalid utf-8 name", ParsePrompt, "{\"name\":\"a\xffb\"}", KindPrompt, "a\ufffdb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it, err := tc.parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if it.Kind != tc.kind || it.Key != tc.key || string(it.Raw) != tc.in || it.Fixes != nil {
				t.Errorf("got %+v", it)
			}
			checkKey(t, it)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) (Item, error)
		in    string
		want  string
	}{
		{"empty input", ParseTool, ``, `catalog: tool: invalid JSON`},
		{"invalid JSON", ParseTool, `{"name":"a",}`, `catalog: tool: invalid JSON`},
		{"trailing data", ParseTool, `{"name":"a"} {}`, `catalog: tool: invalid JSON`},
		{"array", ParseTool, `[{"name":"a"}]`, `catalog: tool: not a JSON object`},
		{"string", ParsePrompt, `"a"`, `catalog: prompt: not a JSON object`},
		{"null", ParseTool, `null`, `catalog: tool: not a JSON object`},
		{"name missing", ParseTool, `{"title":"a"}`, `catalog: tool: "name" is missing`},
		{"empty object", ParseTool, `{}`, `catalog: tool: "name" is missing`},
		{"name nested only", ParseTool, `{"x":{"name":"a"}}`, `catalog: tool: "name" is missing`},
		{"name not string", ParseTool, `{"name":1}`, `catalog: tool: "name" is not a string`},
		{"name null", ParsePrompt, `{"name":null}`, `catalog: prompt: "name" is not a string`},
		{"name empty", ParseTool, `{"name":""}`, `catalog: tool: "name" is empty`},
		{"duplicate name", ParseTool, `{"name":"a","name":"b"}`, `catalog: tool: duplicate member "name"`},
		{"duplicate other", ParseTool, `{"name":"a","x":1,"x":2}`, `catalog: tool: duplicate member "x"`},
		{"duplicate escaped", ParseTool, `{"name":"a","n\u0061me":"b"}`, `catalog: tool: duplicate member "name"`},
		{"uri missing", ParseResource, `{"name":"a"}`, `catalog: resource: "uri" is missing`},
		{"uriTemplate missing", ParseTemplate, `{"uri":"a"}`, `catalog: resource template: "uriTemplate" is missing`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.parse([]byte(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %s", err, tc.want)
			}
		})
	}
}
