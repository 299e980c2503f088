package era

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestEncodeValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"us west 1":          "us west 1",
		"":                   "",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"\tindented":         "=?base64?CWluZGVudGVk?=",
	} {
		got := EncodeValue(in)
		if got != want {
			t.Errorf("EncodeValue(%q) = %q, want %q", in, got, want)
		}
		if dec, ok := DecodeValue(got); !ok || dec != in {
			t.Errorf("DecodeValue(%q) = %q, %v", got, dec, ok)
		}
	}
	if _, ok := DecodeValue("=?base64?!!?="); ok {
		t.Error("invalid base64 decoded")
	}
}

// The tool definitions of the suite's http-invalid-tool-headers scenario,
// each breaking one rule.
var invalidTools = map[string]string{
	"empty":         `{"type":"object","properties":{"value":{"type":"string","x-mcp-header":""}}}`,
	"object":        `{"type":"object","properties":{"data":{"type":"object","x-mcp-header":"Data"}}}`,
	"array":         `{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}`,
	"null":          `{"type":"object","properties":{"nil":{"type":"null","x-mcp-header":"Nil"}}}`,
	"number":        `{"type":"object","properties":{"f":{"type":"number","x-mcp-header":"F"}}}`,
	"same case":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"Region"}}}`,
	"diff case":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`,
	"space":         `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`,
	"colon":         `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`,
	"non-ascii":     `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`,
	"control":       `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region\t1"}}}`,
	"under items":   `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`,
	"under anyOf":   `{"type":"object","anyOf":[{"properties":{"v":{"type":"string","x-mcp-header":"V"}}}]}`,
	"under $defs":   `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}},"properties":{"v":{"$ref":"#/$defs/d"}}}`,
	"on the root":   `{"type":"object","x-mcp-header":"Root"}`,
	"not a string":  `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":7}}}`,
	"no type":       `{"type":"object","properties":{"v":{"x-mcp-header":"V"}}}`,
	"nullable type": `{"type":"object","properties":{"v":{"type":["string","null"],"x-mcp-header":"V"}}}`,
}

func TestParamHeaders(t *testing.T) {
	for name, schema := range invalidTools {
		if _, err := ParamHeaders([]byte(schema)); !errors.Is(err, ErrInvalidParamHeader) {
			t.Errorf("%s: ParamHeaders = %v, want ErrInvalidParamHeader", name, err)
		}
	}
	got, err := ParamHeaders([]byte(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region","description":"x-mcp-header"},
		"opts":{"type":"object","properties":{"level":{"type":"integer","x-mcp-header":"Level"}}},
		"flag":{"type":"boolean","x-mcp-header":"Flag"},
		"query":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Region": "region", "Level": "opts.level", "Flag": "flag"}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for _, p := range got {
		if want[p.Header] != strings.Join(p.Path, ".") {
			t.Errorf("%s at %v, want %s", p.Header, p.Path, want[p.Header])
		}
	}
	if got, err := ParamHeaders([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)); got != nil || err != nil {
		t.Errorf("no annotations: %v, %v", got, err)
	}
}

func TestHeaders(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"priority":{"type":"integer","x-mcp-header":"Priority"},
		"verbose":{"type":"boolean","x-mcp-header":"Verbose"},
		"debug":{"type":"boolean","x-mcp-header":"Debug"},
		"text":{"type":"string","x-mcp-header":"Text"},
		"method_val":{"type":"string","x-mcp-header":"Method"},
		"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"float_val":{"type":"number"}}}`)
	bindings, err := ParamHeaders(schema)
	if err != nil {
		t.Fatal(err)
	}
	params := []byte(`{"name":"my tool ü","arguments":{"region":"us-west1","priority":42.0,"verbose":null,"debug":false,` +
		`"text":" padded ","method_val":"m","opts":{"zone":"b"},"float_val":3.14}}`)
	h := http.Header{}
	Headers("tools/call", params, func(string) []ParamHeader { return bindings }, h.Set)
	want := map[string]string{
		"Mcp-Method": "tools/call", "Mcp-Name": EncodeValue("my tool ü"),
		"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Debug": "false",
		"Mcp-Param-Text": "=?base64?IHBhZGRlZCA=?=", "Mcp-Param-Method": "m", "Mcp-Param-Zone": "b",
	}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers %v, want exactly %v", h, want)
	}
	// What the hub's front checks against what a client sends.
	if msg := CheckParamHeaders(params, bindings, h.Get); msg != "" {
		t.Errorf("CheckParamHeaders of its own headers: %s", msg)
	}
	h.Set("Mcp-Param-Priority", "42.0")
	if msg := CheckParamHeaders(params, bindings, h.Get); msg != "" {
		t.Errorf("numbers compare as numbers: %s", msg)
	}
	for _, tt := range []struct{ header, value, want string }{
		{"Mcp-Param-Region", "", "missing Mcp-Param-Region"},
		{"Mcp-Param-Region", "eu", "does not match"},
		{"Mcp-Param-Verbose", "true", "is set but the argument"},
		{"Mcp-Param-Text", "=?base64?*?=", "does not match"},
	} {
		h2 := h.Clone()
		h2.Set(tt.header, tt.value)
		if msg := CheckParamHeaders(params, bindings, h2.Get); !strings.Contains(msg, tt.want) {
			t.Errorf("%s=%q: %q, want %q", tt.header, tt.value, msg, tt.want)
		}
	}
	for method, name := range map[string]string{"resources/read": "test://a b", "prompts/get": "p", "tools/list": ""} {
		h := http.Header{}
		Headers(method, []byte(`{"uri":"test://a b","name":"p"}`), nil, h.Set)
		if h.Get("Mcp-Method") != method || h.Get("Mcp-Name") != name {
			t.Errorf("%s: %v", method, h)
		}
	}
}
