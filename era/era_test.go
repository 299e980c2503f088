package era

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// sessionResults are session-era results (valid at 2025-11-25), by method,
// as a session-era server sends them: no resultType, no caching hints.
var sessionResults = []struct {
	method, def, result string
}{
	{"tools/call", "CallToolResult", `{"content":[{"type":"text","text":"hello"}],"isError":false}`},
	{"tools/call", "CallToolResult", `{"content":[],"structuredContent":{"n":1},"_meta":{"x/y":1}}`},
	{"tools/list", "ListToolsResult", `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"nextCursor":"c"}`},
	{"prompts/list", "ListPromptsResult", `{"prompts":[{"name":"p"}]}`},
	{"prompts/get", "GetPromptResult", `{"messages":[{"role":"user","content":{"type":"text","text":"t"}}]}`},
	{"resources/list", "ListResourcesResult", `{"resources":[{"uri":"test://a","name":"a"}]}`},
	{"resources/templates/list", "ListResourceTemplatesResult", `{"resourceTemplates":[{"uriTemplate":"test://{id}","name":"t"}]}`},
	{"resources/read", "ReadResourceResult", `{"contents":[{"uri":"test://a","text":"x"}]}`},
	{"completion/complete", "CompleteResult", `{"completion":{"values":["a"],"total":1,"hasMore":false}}`},
	{"tools/call", "CallToolResult", ` { "content" : [ ] } `},
}

func TestCompleteMakesStatelessResults(t *testing.T) {
	for _, tt := range sessionResults {
		t.Run(tt.method, func(t *testing.T) {
			in := []byte(tt.result)
			mustValid(t, "2025-11-25", tt.def, in)
			mustInvalid(t, "2026-07-28", tt.def, in)
			out, err := Complete(tt.method, in, Cache{TTLMs: 5000, Scope: Public})
			if err != nil {
				t.Fatal(err)
			}
			mustValid(t, "2026-07-28", tt.def, out)
			if Cacheable(tt.method) && !bytes.Contains(out, []byte(`"ttlMs":5000,"cacheScope":"public"`)) {
				t.Errorf("caching hints missing: %s", out)
			}
			// The rest keeps its bytes.
			if !bytes.HasSuffix(out, bytes.TrimSpace(in)[1:]) {
				t.Errorf("members changed: %s → %s", in, out)
			}
			// Complete again: nothing is missing, the same bytes back.
			again, err := Complete(tt.method, out, Cache{})
			if err != nil || &again[0] != &out[0] {
				t.Errorf("a complete result was copied or changed: %s", again)
			}
		})
	}
}

func TestCompleteKeepsWhatTheServerSaid(t *testing.T) {
	// A stateless-era server's own hints win over the hub's.
	in := []byte(`{"tools":[],"ttlMs":300000,"cacheScope":"public"}`)
	out, err := Complete("tools/list", in, Cache{TTLMs: 0, Scope: Private})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"resultType":"complete","tools":[],"ttlMs":300000,"cacheScope":"public"}` {
		t.Errorf("got %s", out)
	}
	mustValid(t, "2026-07-28", "ListToolsResult", out)
	// An input_required result passes untouched.
	ir := []byte(`{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`)
	out, err = Complete("tools/call", ir, Cache{})
	if err != nil || !bytes.Equal(out, ir) {
		t.Errorf("input_required changed: %s", out)
	}
	mustValid(t, "2026-07-28", "InputRequiredResult", out)
	// A session-era server's result that asks again (go-sdk hands a
	// handler's second round to a session-era client as it is) asks a
	// stateless client too; an empty inputRequests asks nothing.
	again := []byte(`{"content":[],"inputRequests":{"step2":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"round=2"}`)
	out, err = Complete("tools/call", again, Cache{})
	if err != nil || !bytes.HasPrefix(out, []byte(`{"resultType":"input_required",`)) || !InputRequired(out) {
		t.Errorf("a result with inputRequests: %s %v", out, err)
	}
	mustValid(t, "2026-07-28", "InputRequiredResult", out)
	out, _ = Complete("tools/call", []byte(`{"content":[],"inputRequests":{ }}`), Cache{})
	if !bytes.HasPrefix(out, []byte(`{"resultType":"complete",`)) {
		t.Errorf("an empty inputRequests: %s", out)
	}
	// An empty result and a scope that is neither public nor private.
	out, _ = Complete("resources/read", []byte(`{}`), Cache{TTLMs: -4, Scope: "shared"})
	if string(out) != `{"resultType":"complete","ttlMs":0,"cacheScope":"private"}` {
		t.Errorf("got %s", out)
	}
	if _, err := Complete("tools/call", []byte(`{"a":`), Cache{}); err == nil {
		t.Error("invalid JSON: want an error")
	}
}

func TestToSession(t *testing.T) {
	for _, tt := range []struct{ method, def, in, want string }{
		{"tools/list", "ListToolsResult",
			`{"resultType":"complete","tools":[{"name":"a","inputSchema":{"type":"object"}}],"ttlMs":5,"cacheScope":"public"}`,
			`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`},
		{"tools/call", "CallToolResult",
			`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"},"x/y":1},"content":[],"resultType":"complete"}`,
			`{"_meta":{"x/y":1},"content":[]}`},
		{"tools/call", "CallToolResult",
			`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}},"content":[{"type":"text","text":"resultType"}],"resultType":"complete"}`,
			`{"content":[{"type":"text","text":"resultType"}]}`},
	} {
		mustValid(t, "2026-07-28", tt.def, []byte(tt.in))
		out := ToSession([]byte(tt.in))
		if string(out) != tt.want {
			t.Errorf("ToSession(%s) = %s, want %s", tt.in, out, tt.want)
		}
		mustValid(t, "2025-11-25", tt.def, out)
	}
	plain := []byte(`{"content":[]}`)
	if out := ToSession(plain); &out[0] != &plain[0] {
		t.Error("a session-era result was copied")
	}
	ir := []byte(`{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`)
	if out := ToSession(ir); &out[0] != &ir[0] {
		t.Error("an input_required result was changed")
	}
}

func TestRequestForEachHop(t *testing.T) {
	// A 2026-07-28 client's call, as it reaches the hub.
	in := []byte(`{"name":"echo","arguments":{"m":"x"},"_meta":{"progressToken":"t1",` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}`)
	c := &Client{Version: Stateless, Info: []byte(`{"name":"mcp-hub","version":"1.0"}`),
		Caps: Caps{Elicitation: true, ElicitForm: true, ElicitURL: true, Roots: true}, LogLevel: "debug"}
	out, err := Request(in, c, wire.Member{Key: "progressToken", Value: []byte(`"p9"`)})
	if err != nil {
		t.Fatal(err)
	}
	msg := wire.AppendRequest(nil, []byte(`1`), "tools/call", out)
	mustValid(t, "2026-07-28", "CallToolRequest", msg)
	for _, want := range []string{`"progressToken":"p9"`, `"name":"mcp-hub"`, `"io.modelcontextprotocol/logLevel":"debug"`,
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"roots":{}}`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("missing %s in %s", want, out)
		}
	}
	if bytes.Contains(out, []byte(`"name":"c"`)) || bytes.Contains(out, []byte(`"t1"`)) {
		t.Errorf("the previous hop's _meta leaked: %s", out)
	}
	if RequestVersion(out) != Stateless {
		t.Errorf("RequestVersion = %q", RequestVersion(out))
	}
	// The same call to a session-era server: the reserved keys go, nothing
	// is added.
	out, err = Request(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"name":"echo","arguments":{"m":"x"},"_meta":{"progressToken":"t1"}}` {
		t.Errorf("session hop: %s", out)
	}
	mustValid(t, "2025-11-25", "CallToolRequest", wire.AppendRequest(nil, []byte(`1`), "tools/call", out))
	if RequestVersion(out) != "" {
		t.Error("a session-era request has a version")
	}
	// A request without params gets _meta of its own.
	out, _ = Request(nil, c)
	mustValid(t, "2026-07-28", "ListToolsRequest", wire.AppendRequest(nil, []byte(`2`), "tools/list", out))
	// Nothing to change: no copy.
	plain := []byte(`{"name":"echo"}`)
	if out, _ := Request(plain, nil); &out[0] != &plain[0] {
		t.Error("an unchanged request was copied")
	}
}

func TestCaps(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Caps
		json string
	}{
		{`{}`, Caps{}, `{}`},
		{`{"roots":{"listChanged":true},"sampling":{},"elicitation":{}}`,
			Caps{Roots: true, Sampling: true, Elicitation: true, ElicitForm: true},
			`{"elicitation":{"form":{}},"roots":{},"sampling":{}}`},
		{`{"elicitation":{"url":{}},"sampling":{"tools":{},"context":{}},"experimental":{"x":{}}}`,
			Caps{Elicitation: true, ElicitURL: true, Sampling: true, SamplingTools: true, SamplingContext: true},
			`{"elicitation":{"url":{}},"sampling":{"context":{},"tools":{}}}`},
		{`{"sampling":null,"roots":true}`, Caps{}, `{}`},
	} {
		got, err := ParseCaps([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("ParseCaps(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		js := got.AppendJSON(nil)
		if string(js) != tt.json {
			t.Errorf("AppendJSON = %s, want %s", js, tt.json)
		}
		mustValid(t, "2026-07-28", "ClientCapabilities", js)
	}
	if _, err := ParseCaps([]byte(`[`)); err == nil {
		t.Error("invalid JSON: want an error")
	}
}

func TestInputRequiredRoundTrip(t *testing.T) {
	reqs := []InputRequest{
		{Key: "user_name", Method: "elicitation/create", Params: []byte(`{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)},
		{Key: "roots", Method: "roots/list"},
		{Key: "greet", Method: "sampling/createMessage", Params: []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}`)},
	}
	res := NewInputRequired(reqs, `{"round":1}`)
	mustValid(t, "2026-07-28", "InputRequiredResult", res)
	if !InputRequired(res) || InputRequired([]byte(`{"content":[{"type":"text","text":"input_required"}]}`)) {
		t.Error("InputRequired misread")
	}
	got, state, err := InputRequests(res)
	if err != nil || len(got) != 3 || string(state) != `"{\"round\":1}"` {
		t.Fatalf("InputRequests = %+v, %s, %v", got, state, err)
	}
	for i := range got {
		if got[i].Key != reqs[i].Key || got[i].Method != reqs[i].Method || string(got[i].Params) != string(reqs[i].Params) {
			t.Errorf("request %d = %+v, want %+v", i, got[i], reqs[i])
		}
	}
	answers := []wire.Member{
		{Key: "user_name", Value: []byte(`{"action":"accept","content":{"name":"Ada"}}`)},
		{Key: "roots", Value: []byte(`{"roots":[{"uri":"file:///tmp"}]}`)},
		{Key: "greet", Value: []byte(`{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}`)},
	}
	orig := []byte(`{"name":"t","arguments":{},"requestState":"stale","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	retry, err := Retry(orig, answers, state)
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, "2026-07-28", "CallToolRequest", wire.AppendRequest(nil, []byte(`3`), "tools/call", retry))
	responses, st := InputResponses(retry)
	if st != `{"round":1}` || !bytes.Contains(responses, []byte(`"Ada"`)) {
		t.Errorf("InputResponses = %s, %q", responses, st)
	}
	// Without a state, a stale one is removed.
	retry, _ = Retry(orig, answers[:1], nil)
	if bytes.Contains(retry, []byte(`requestState`)) {
		t.Errorf("stale requestState kept: %s", retry)
	}
	for _, bad := range []string{`{"resultType":"input_required"}`, `{"resultType":"input_required","inputRequests":{"a":{}}}`, `{"inputRequests":{"a":{"method":1}}}`} {
		if _, _, err := InputRequests([]byte(bad)); err == nil {
			t.Errorf("InputRequests(%s): want an error", bad)
		}
	}
}

func TestStatus(t *testing.T) {
	for resp, want := range map[string]int{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                http.StatusOK,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}`:      http.StatusNotFound,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}`:      http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"m"}}`:      http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m"}}`:      http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"m"}}`:      http.StatusBadRequest,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m"}}`:      http.StatusOK,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"custom"}}`: http.StatusOK,
	} {
		if got := Status([]byte(resp)); got != want {
			t.Errorf("Status(%s) = %d, want %d", resp, got, want)
		}
	}
}

func TestUnsupportedVersionError(t *testing.T) {
	data := UnsupportedVersionData([]string{Stateless, Session}, "1999-01-01")
	msg := wire.AppendError(nil, []byte(`7`), CodeUnsupportedProtocolVersion, "unsupported protocol version", data)
	mustValid(t, "2026-07-28", "UnsupportedProtocolVersionError", msg)
}

// methods returns the methods a revision's schema defines.
func methods(t *testing.T, version string) map[string]bool {
	out := map[string]bool{}
	for _, d := range defs(t, version) {
		var def struct {
			Properties struct {
				Method struct {
					Const string `json:"const"`
				} `json:"method"`
			} `json:"properties"`
		}
		if json.Unmarshal(d, &def) == nil && def.Properties.Method.Const != "" {
			out[def.Properties.Method.Const] = true
		}
	}
	return out
}

func TestRemoved(t *testing.T) {
	old, cur := methods(t, "2025-11-25"), methods(t, "2026-07-28")
	for m := range old {
		if strings.HasPrefix(m, "tasks/") || m == "notifications/tasks/status" {
			continue // the tasks extension
		}
		if Removed(m) == cur[m] {
			t.Errorf("Removed(%q) = %v, but the 2026-07-28 schema has it: %v", m, Removed(m), cur[m])
		}
	}
	for m := range cur {
		if StatelessOnly(m) == old[m] {
			t.Errorf("StatelessOnly(%q) = %v, but the 2025-11-25 schema has it: %v", m, StatelessOnly(m), old[m])
		}
	}
	for _, m := range []string{"tools/call", "server/discover", "tasks/get", "subscriptions/listen"} {
		if Removed(m) {
			t.Errorf("%s is not removed", m)
		}
	}
	if !StatelessOnly("server/discover") || StatelessOnly("tools/list") {
		t.Error("StatelessOnly misread")
	}
}

func TestResponseDropsTheHopsMeta(t *testing.T) {
	in := []byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"},"x/y":1},"content":[{"type":"text","text":"io.modelcontextprotocol/ in text"}],"resultType":"complete"}`)
	out := Response(in)
	if string(out) != `{"_meta":{"x/y":1},"content":[{"type":"text","text":"io.modelcontextprotocol/ in text"}],"resultType":"complete"}` {
		t.Errorf("got %s", out)
	}
	mustValid(t, "2026-07-28", "CallToolResult", out)
	plain := []byte(`{"content":[]}`)
	if out := Response(plain); &out[0] != &plain[0] {
		t.Error("a result without reserved keys was copied")
	}
}

func TestLogLevelRank(t *testing.T) {
	if LogLevelRank("debug") != 0 || LogLevelRank("emergency") != 7 || LogLevelRank("warning") <= LogLevelRank("notice") {
		t.Errorf("ranks: debug %d, emergency %d", LogLevelRank("debug"), LogLevelRank("emergency"))
	}
	for _, bad := range []string{"", "Debug", "verbose"} {
		if LogLevelRank(bad) != -1 {
			t.Errorf("LogLevelRank(%q) = %d", bad, LogLevelRank(bad))
		}
	}
}
