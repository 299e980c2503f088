package hub

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAdminArgsSchema: each admin tool's input schema is resolved by
// jsonschema-go once, and a call that does not validate is refused with
// the field and what it must be (a member of an object field as
// field.member); the first field by name when several are wrong.
func TestAdminArgsSchema(t *testing.T) {
	h, err := New(&Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	schemas := map[string]map[string]any{}
	for _, tool := range h.adminTools() {
		schemas[tool.tool.Name] = tool.tool.InputSchema.(map[string]any)
	}
	add := schemas["hub_add_server"]
	a1, err := schemaOf(add)
	if err != nil {
		t.Fatal(err)
	}
	if a2, _ := schemaOf(h.adminTools()[2].tool.InputSchema.(map[string]any)); a2 != a1 {
		t.Errorf("hub_add_server's schema was resolved again")
	}
	for _, tt := range []struct {
		tool, args, want string
	}{
		{"hub_add_server", `{"name":"x","command":3}`, "command: must be a string"},
		{"hub_add_server", `{"name":"x","command":"x","args":"-y"}`, "args: must be an array of strings"},
		{"hub_add_server", `{"name":"x","command":"x","args":["a",1]}`, "args: must be an array of strings"},
		{"hub_add_server", `{"name":"x","command":"x","env":{"A":1}}`, "env: must be an object of strings"},
		{"hub_add_server", `{"name":"x","command":"x","transport":"ftp"}`, `transport: must be one of stdio, sse, http, got "ftp"`},
		{"hub_add_server", `{"name":"x","command":"x","enabled":"yes"}`, "enabled: must be true or false"},
		{"hub_add_server", `{"name":"x","comand":"y"}`, "comand: unknown field (known: args, autoConnect, command, cwd, description, enabled, env, headers, name, oauth, scope, transport, trust, url)"},
		{"hub_add_server", `{"name":"x","url":"https://h/mcp","oauth":{"clientId":1}}`, "oauth.clientId: must be a string"},
		{"hub_add_server", `{"name":"x","url":"https://h/mcp","oauth":{"scope":["a"]}}`, "oauth.scope: unknown field (known: clientId, clientMetadataUrl, clientSecret, redirectPort, scopes)"},
		{"hub_add_server", `{"name":"x","url":"https://h/mcp","oauth":{"redirectPort":70000}}`, "oauth.redirectPort: must be an integer from 0 to 65535"},
		{"hub_add_server", `{"name":"x","url":"https://h/mcp","oauth":"c"}`, "oauth: must be an object"},
		{"hub_add_server", `{"command":"y"}`, "name: required"},
		{"hub_add_server", `{"name":"../x","command":"y"}`, `name: invalid name "../x": it has '.', '/'; a name is made of letters, digits, '-' and '_' (at most 32, the first a letter or a digit)`},
		{"hub_add_server", `{"name":"Hub_x","command":"y"}`, `name: invalid name "Hub_x": "hub" and names starting "hub_" are reserved for the hub`},
		{"hub_add_server", `{"url":1,"command":2,"name":3}`, "command: must be a string"},
		{"hub_add_server", `[1]`, "arguments must be an object"},
		{"hub_get_server", `{"name":"hub"}`, `name: invalid name "hub": "hub" and names starting "hub_" are reserved`},
		{"hub_list_servers", `{"x":1}`, "x: unknown field (known: )"},
	} {
		_, err := decodeArgs(json.RawMessage(tt.args), schemas[tt.tool])
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s(%s) = %v, want %q", tt.tool, tt.args, err, tt.want)
		}
	}
	for _, ok := range []struct{ tool, args string }{
		{"hub_list_servers", ``}, {"hub_list_servers", `null`}, {"hub_list_servers", `{}`},
		{"hub_add_server", `{"name":"hubble","command":"x","args":["-y"],"env":{"A":"1"},"transport":"stdio","autoConnect":false}`},
		{"hub_restart_server", `{"name":"a_b-9"}`},
		{"hub_add_server", `{"name":"web","url":"https://h/mcp","oauth":{"clientId":"c","clientSecret":"${S}","scopes":["a"],"clientMetadataUrl":"https://x/c.json","redirectPort":8765}}`},
		{"hub_update_server", `{"name":"a","args":null,"env":null,"cwd":null,"enabled":null}`},
	} {
		if _, err := decodeArgs(json.RawMessage(ok.args), schemas[ok.tool]); err != nil {
			t.Errorf("%s(%s): %v", ok.tool, ok.args, err)
		}
	}
}
