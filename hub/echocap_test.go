package hub

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Issue 26: errors quote at most a bounded prefix of bad input, on every
// surface: a megabyte of server name, field name or tool name is refused
// with an answer of a few KiB that still says what is wrong. On the old
// code each answer echoed the whole megabyte.
func TestErrorsQuoteABoundedPrefix(t *testing.T) {
	_, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo"))
	api := srv.URL + "/api/servers"
	mb := strings.Repeat("n", 1<<20)
	spaced := strings.Repeat("n ", 1<<19)
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	sid := initSession(t, srv)
	mcpCall := func(method, params string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":%q,"params":%s}`, method, params)
		resp := raw(t, "POST", srv.URL+"/mcp", body, map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}})
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	rest := func(method, url, body string) string {
		_, out := apiDo(t, method, url, body, testToken)
		b, _ := json.Marshal(out)
		return string(b)
	}
	for _, tt := range []struct {
		name   string
		answer func() string
		want   string
	}{
		{"REST: a name", func() string { return rest("POST", api, `{"name":`+quote(mb)+`,"command":"x"}`) }, "a name is made of letters"},
		{"REST: a name with spaces", func() string { return rest("POST", api, `{"name":`+quote(spaced)+`,"command":"x"}`) }, "a name is made of letters"},
		{"REST: a field name", func() string { return rest("POST", api, `{"name":"ok",`+quote(mb)+`:1}`) }, "unknown field"},
		{"REST: an enum value", func() string { return rest("POST", api, `{"name":"ok","command":"x","transport":`+quote(mb)+`}`) }, "must be one of"},
		{"REST: a name in the path", func() string { return rest("GET", api+"/"+mb[:512<<10], "") }, "no MCP server named"},
		{"MCP: hub_add_server's name", func() string {
			return mcpCall("tools/call", `{"name":"hub_add_server","arguments":{"name":`+quote(mb)+`,"command":"x"}}`)
		}, "a name is made of letters"},
		{"MCP: a tool name", func() string { return mcpCall("tools/call", `{"name":`+quote(mb)+`,"arguments":{}}`) }, "unknown tool"},
		{"MCP: a resource URI", func() string { return mcpCall("resources/read", `{"uri":`+quote("file:///"+mb)+`}`) }, "not found"},
		{"MCP: hub_call_tool's server", func() string {
			return mcpCall("tools/call", `{"name":"hub_call_tool","arguments":{"server":`+quote(mb)+`,"tool":"echo"}}`)
		}, "no MCP server named"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.answer()
			if len(got) > 16<<10 || !strings.Contains(got, tt.want) {
				t.Errorf("answer of %d bytes, want at most 16 KiB saying %q: %.300s", len(got), tt.want, got)
			}
		})
	}
}
