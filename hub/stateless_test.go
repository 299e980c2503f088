package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/catalog"
)

// wireLog records what a client's HTTP exchanges carried: request methods
// (Mcp-Method), and whether any request or response had a session id.
type wireLog struct {
	base       http.RoundTripper
	mu         sync.Mutex
	methods    []string
	sessionIDs int
}

func (l *wireLog) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := l.base.RoundTrip(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.methods = append(l.methods, r.Header.Get("Mcp-Method"))
	if r.Header.Get("Mcp-Session-Id") != "" || (resp != nil && resp.Header.Get("Mcp-Session-Id") != "") {
		l.sessionIDs++
	}
	return resp, err
}

// statelessClient connects a go-sdk client asking for 2026-07-28 (go-sdk's
// default) to the hub's /mcp, with its HTTP exchanges recorded.
func statelessClient(t *testing.T, url string, opts *mcp.ClientOptions) (*mcp.ClientSession, *wireLog) {
	t.Helper()
	l := &wireLog{base: http.DefaultTransport}
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: l}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stateless-test", Version: "1"}, opts).
		Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the client negotiated %q, want 2026-07-28", v)
	}
	return cs, l
}

func slCall(t *testing.T, cs *mcp.ClientSession, p *mcp.CallToolParams) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.StructuredContent != nil {
		s, _ := json.Marshal(res.StructuredContent)
		b.Write(s)
	}
	return b.String(), res.IsError
}

// TestStatelessClient: go-sdk's client asking for 2026-07-28 talks to the
// HTTP front without initialize or a session id: it lists tools, calls a
// forwarded tool with progress, calls a hub_* tool, and calls tools whose
// upstreams ask it for input: one of the session era, whose elicitation
// request the hub turns into an input_required result (a 2026-07-28
// client is never sent a request of the server's own), and one of
// 2026-07-28, whose input_required result passes as it is; the client
// answers both by calling again. Afterwards the hub keeps nothing of the
// client.
func TestStatelessClient(t *testing.T) {
	old := sessionEraSpec(fixtureSpec("old", "-only", "echo,progress,elicit"))
	mrtr := fixtureSpec("new", "-only", "elicit,sample")
	mrtr.ProtocolVersion = "2026-07-28"
	h, srv := startHTTPHubOpts(t, &Options{Catalog: catalog.Options{Policy: catalog.PolicyPrefix}}, nil, old, mrtr)
	eventually(t, 10*time.Second, "both upstreams", func() bool { return h.settled() && len(h.Catalog().Tools()) >= 5+len(h.adminTools()) })

	var progress, elicits atomic.Int32
	cs, wl := statelessClient(t, srv.URL, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == "p1" {
				progress.Add(1)
			}
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicits.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes from the stateless client"}}, nil
		},
	})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range res.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"old__echo", "old__progress", "new__elicit", "hub_list_servers"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "old__echo", Arguments: map[string]any{"text": "hi"}}); isErr || !strings.Contains(got, "hi") {
		t.Errorf("echo = %q (error %v)", got, isErr)
	}
	p := &mcp.CallToolParams{Name: "old__progress", Arguments: map[string]any{"steps": 3, "delay_ms": 1}}
	p.SetProgressToken("p1")
	if _, isErr := slCall(t, cs, p); isErr {
		t.Error("progress failed")
	}
	eventually(t, 10*time.Second, "progress notifications at the client", func() bool { return progress.Load() == 3 })
	if got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "hub_list_servers"}); isErr || !strings.Contains(got, `"old"`) || !strings.Contains(got, `"new"`) {
		t.Errorf("hub_list_servers = %q (error %v)", got, isErr)
	}
	for i, tool := range []string{"old__elicit", "new__elicit"} {
		wl.mu.Lock()
		before := len(wl.methods)
		wl.mu.Unlock()
		got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": "go on?"}})
		if isErr || !strings.Contains(got, "yes from the stateless client") {
			t.Errorf("%s = %q (error %v)", tool, got, isErr)
		}
		if n := elicits.Load(); n != int32(i+1) {
			t.Errorf("after %s the client answered %d elicitations, want %d", tool, n, i+1)
		}
		wl.mu.Lock()
		sent := wl.methods[before:]
		wl.mu.Unlock()
		if len(sent) != 2 || sent[0] != "tools/call" || sent[1] != "tools/call" {
			t.Errorf("%s: the client sent %q, want a call and its retry (no answer to a request of the hub's)", tool, sent)
		}
	}
	// A tool that asks for input the client cannot give fails clearly.
	if got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "new__sample", Arguments: map[string]any{"prompt": "p"}}); !isErr || !strings.Contains(got, "sampling capability") {
		t.Errorf("sample from a client without sampling = %q (error %v)", got, isErr)
	}

	wl.mu.Lock()
	methods, sids := wl.methods, wl.sessionIDs
	wl.mu.Unlock()
	if sids != 0 {
		t.Errorf("%d exchanges carried an Mcp-Session-Id", sids)
	}
	for _, m := range methods {
		if m == "initialize" {
			t.Errorf("the client sent initialize: %v", methods)
		}
	}
	if methods[0] != "server/discover" {
		t.Errorf("first request %q, want server/discover", methods[0])
	}
	eventually(t, 5*time.Second, "no session left on the hub", func() bool { return h.sessionCount() == 0 })
}

// TestStatelessListChanged: a stateless client that wants list changes
// holds a subscriptions/listen stream, and hears of a new tool on it.
func TestStatelessListChanged(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo,add_tool"))
	eventually(t, 10*time.Second, "the upstream", func() bool { return h.settled() && len(h.Catalog().Tools()) >= 2 })
	changed := make(chan struct{}, 8)
	cs, _ := statelessClient(t, srv.URL, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	if _, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "add_tool", Arguments: map[string]any{"name": "late"}}); isErr {
		t.Fatal("add_tool failed")
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed on the listen stream")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range res.Tools {
		found = found || tl.Name == "late"
	}
	if !found {
		t.Error("the new tool is not listed")
	}
}

// statelessBody is a raw 2026-07-28 request.
func statelessBody(id, method, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = strings.Replace(params, "{", "{"+meta+",", 1)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params)
}

// TestStatelessEdges sends raw stateless requests: a missing or
// unsupported version, and mirrored headers that disagree with the body,
// get 400 with the 2026-07-28 error; a session-era request with a session
// id the hub does not know gets 404, so its client initializes again.
func TestStatelessEdges(t *testing.T) {
	_, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo,add"))
	hdr := func(kv ...string) map[string][]string {
		m := map[string][]string{"Authorization": auth}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = append(m[kv[i]], kv[i+1])
		}
		return m
	}
	const v = "Mcp-Protocol-Version"
	list := statelessBody("1", "tools/list", "")
	call := statelessBody("2", "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)
	tests := []struct {
		name   string
		method string
		body   string
		hdr    map[string][]string
		status int
		code   int64
		want   string
	}{
		{"valid tools/list", "POST", list, hdr(v, "2026-07-28", "Mcp-Method", "tools/list"), 200, 0, `"name":"echo"`},
		{"valid tools/call", "POST", call, hdr(v, "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "echo"), 200, 0, `x`},
		{"base64 Mcp-Name", "POST", call, hdr(v, "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "=?base64?ZWNobw==?="), 200, 0, `x`},
		{"version header missing", "POST", list, hdr("Mcp-Method", "tools/list"), 400, codeHeaderMismatch, "Mcp-Protocol-Version header is required"},
		{"_meta version missing", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, hdr(v, "2026-07-28", "Mcp-Method", "tools/list"), 400, -32602, "protocolVersion"},
		{"header and _meta differ", "POST", strings.Replace(list, `protocolVersion":"2026-07-28`, `protocolVersion":"2027-01-01`, 1), hdr(v, "2026-07-28", "Mcp-Method", "tools/list"), 400, codeHeaderMismatch, "does not match"},
		{"unsupported version", "POST", strings.Replace(list, `protocolVersion":"2026-07-28`, `protocolVersion":"2027-01-01`, 1), hdr(v, "2027-01-01", "Mcp-Method", "tools/list"), 400, codeUnsupportedProtocolVersion, `"supported":["2026-07-28"`},
		{"no capabilities", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, hdr(v, "2026-07-28", "Mcp-Method", "tools/list"), 400, -32602, "clientCapabilities"},
		{"Mcp-Method missing", "POST", list, hdr(v, "2026-07-28"), 400, codeHeaderMismatch, "Mcp-Method"},
		{"Mcp-Method differs", "POST", call, hdr(v, "2026-07-28", "Mcp-Method", "tools/list", "Mcp-Name", "echo"), 400, codeHeaderMismatch, "Mcp-Method"},
		{"two Mcp-Method headers", "POST", list, hdr(v, "2026-07-28", "Mcp-Method", "tools/list", "Mcp-Method", "tools/list"), 400, codeHeaderMismatch, "more than one"},
		{"Mcp-Name missing", "POST", call, hdr(v, "2026-07-28", "Mcp-Method", "tools/call"), 400, codeHeaderMismatch, "Mcp-Name"},
		{"Mcp-Name differs", "POST", call, hdr(v, "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "add"), 400, codeHeaderMismatch, "Mcp-Name"},
		{"unknown method", "POST", statelessBody("3", "no/such", ""), hdr(v, "2026-07-28", "Mcp-Method", "no/such"), 404, -32601, ""},
		{"initialize is not 2026-07-28", "POST", statelessBody("4", "initialize", `{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`), hdr(v, "2026-07-28", "Mcp-Method", "initialize"), 404, -32601, ""},
		{"GET has no stream", "GET", "", hdr(v, "2026-07-28", "Accept", "text/event-stream"), 405, -32600, "POST"},
		{"unknown session (session era)", "POST", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, hdr(v, "2025-11-25", "Mcp-Session-Id", "NOSUCHSESSION"), 404, -32600, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := raw(t, tt.method, srv.URL+"/mcp", tt.body, tt.hdr)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if !strings.Contains(string(body), tt.want) {
				t.Errorf("body %s lacks %q", body, tt.want)
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Error("a stateless answer carries Mcp-Session-Id")
			}
			if tt.code == 0 {
				return
			}
			var m struct {
				Error *struct {
					Code int64 `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil || m.Error == nil {
				t.Fatalf("not a JSON-RPC error: %s", body)
			}
			if m.Error.Code != tt.code {
				t.Errorf("code %d, want %d", m.Error.Code, tt.code)
			}
		})
	}
	// A 2026-07-28 request on a session-era session is refused, with the
	// versions that session speaks.
	resp := raw(t, "POST", srv.URL+"/mcp", initBody, map[string][]string{"Authorization": auth})
	sid := resp.Header.Get("Mcp-Session-Id")
	resp = raw(t, "POST", srv.URL+"/mcp", list, hdr(v, "2025-11-25", "Mcp-Session-Id", sid))
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), fmt.Sprint(codeUnsupportedProtocolVersion)) || !strings.Contains(string(body), `"supported":["2025-11-25"`) {
		t.Errorf("a stateless request on a session: %s", body)
	}
}

// TestStatelessManyClients: 20 stateless clients call tools at once while
// session-era clients do the same on one hub; every call gets its own
// answer.
func TestStatelessManyClients(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo,progress"))
	eventually(t, 10*time.Second, "the upstream", func() bool { return h.settled() })
	var wg sync.WaitGroup
	var failures atomic.Int32
	run := func(name string, cs *mcp.ClientSession) {
		defer wg.Done()
		for i := range 10 {
			text := fmt.Sprintf("%s-%d", name, i)
			got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
			if isErr || !strings.Contains(got, text) {
				failures.Add(1)
				t.Errorf("%s: echo %q = %q", name, text, got)
			}
		}
	}
	var clients []*mcp.ClientSession
	var names []string
	for i := range 20 {
		cs, _ := statelessClient(t, srv.URL, nil)
		clients, names = append(clients, cs), append(names, fmt.Sprintf("stateless%d", i))
	}
	for i := range 5 {
		cs := sdkSession(t, srv.URL, false, nil)
		if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
			t.Fatalf("session-era client negotiated %q", v)
		}
		clients, names = append(clients, cs), append(names, fmt.Sprintf("session%d", i))
	}
	for i, cs := range clients {
		wg.Add(1)
		go run(names[i], cs)
	}
	wg.Wait()
	if n := failures.Load(); n > 0 {
		t.Fatalf("%d calls failed", n)
	}
}

// TestStatelessParamHeaders: for a tool whose input schema mirrors an
// argument into a header (x-mcp-header), a stateless tools/call must carry
// that Mcp-Param-* header with the argument's value: go-sdk's client does,
// and a missing, extra or different header gets 400 with -32020.
func TestStatelessParamHeaders(t *testing.T) {
	defs := filepath.Join(t.TempDir(), "defs.json")
	if err := os.WriteFile(defs, []byte(`{"tools":{"region_echo":{"inputSchema":{"type":"object",
		"properties":{"region":{"type":"string","x-mcp-header":"Region"},"text":{"type":"string"}}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo", "-defs", defs))
	eventually(t, 10*time.Second, "region_echo", func() bool { _, ok := h.Catalog().Tool("region_echo"); return ok })
	cs, _ := statelessClient(t, srv.URL, nil)
	if _, err := cs.ListTools(context.Background(), nil); err != nil { // go-sdk mirrors the headers of tools it listed
		t.Fatal(err)
	}
	if got, isErr := slCall(t, cs, &mcp.CallToolParams{Name: "region_echo", Arguments: map[string]any{"region": "eu-west", "text": "hi"}}); isErr || !strings.Contains(got, "eu-west") {
		t.Errorf("go-sdk's call = %q (error %v)", got, isErr)
	}
	body := func(args string) string {
		return statelessBody("7", "tools/call", `{"name":"region_echo","arguments":`+args+`}`)
	}
	base := []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "region_echo"}
	for _, tt := range []struct {
		name, args string
		hdr        []string
		status     int
	}{
		{"matching", `{"region":"eu-west"}`, []string{"Mcp-Param-Region", "eu-west"}, 200},
		{"base64", `{"region":"eu-west"}`, []string{"Mcp-Param-Region", "=?base64?ZXUtd2VzdA==?="}, 200},
		{"different", `{"region":"eu-west"}`, []string{"Mcp-Param-Region", "us-east"}, 400},
		{"missing", `{"region":"eu-west"}`, nil, 400},
		{"without the argument", `{"text":"x"}`, []string{"Mcp-Param-Region", "eu-west"}, 400},
		{"neither", `{"text":"x"}`, nil, 200},
	} {
		hdr := map[string][]string{"Authorization": auth}
		kv := append(slices.Clone(base), tt.hdr...)
		for i := 0; i < len(kv); i += 2 {
			hdr[kv[i]] = []string{kv[i+1]}
		}
		resp := raw(t, "POST", srv.URL+"/mcp", body(tt.args), hdr)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.status || (tt.status == 400 && !strings.Contains(string(b), "-32020")) {
			t.Errorf("%s: %d %s", tt.name, resp.StatusCode, b)
		}
	}
}
