//lint:file-ignore SA1019 the tests exercise sampling, roots and logging, deprecated in 2026-07-28 but part of the protocol versions the hub serves.

package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

const testToken = "0123456789abcdef0123456789abcdef"

// testStore adapts persist to Store (package hubstore has the real adapter).
type testStore struct{ *persist.Store }

func (s testStore) Audit(ctx context.Context, actor, action, up string, detail any) error {
	b, _ := json.Marshal(detail)
	return s.Store.Audit(ctx, persist.AuditEntry{Actor: actor, Action: action, Upstream: up, Detail: b})
}

// startHTTPHub serves a hub (with a real store) over httptest.
func startHTTPHub(t *testing.T, hopts *HTTPOptions, specs ...upstream.Spec) (*Hub, *httptest.Server) {
	t.Helper()
	return startHTTPHubOpts(t, &Options{}, hopts, specs...)
}

// startHTTPHubOpts is startHTTPHub with hub options (its store and store
// poll are set here, and its logger unless given).
func startHTTPHubOpts(t testing.TB, opts *Options, hopts *HTTPOptions, specs ...upstream.Spec) (*Hub, *httptest.Server) {
	t.Helper()
	st, err := persist.Open(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := *opts
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o.Store, o.StorePoll = testStore{st}, 50*time.Millisecond
	h, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	var cfg []ConfigServer
	for _, s := range specs {
		cfg = append(cfg, ConfigServer{Spec: s})
	}
	if err := h.Start(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if hopts == nil {
		hopts = &HTTPOptions{}
	}
	if hopts.Token == "" && !hopts.NoAuth && hopts.Auth == nil {
		hopts.Token = testToken
	}
	handler, err := h.HTTPHandler(hopts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
		st.Close()
	})
	return h, srv
}

// bearer adds the token to every request of a client.
type bearer struct {
	tok  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.base.RoundTrip(r)
}

func authClient() *http.Client {
	return &http.Client{Transport: bearer{testToken, http.DefaultTransport}}
}

// sessionEra makes a go-sdk client speak the session-era protocol (initialize,
// Mcp-Session-Id) to the HTTP front, which otherwise serves it as a
// stateless 2026-07-28 client (stateless_test.go).
var sessionEra = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// sdkSession connects a go-sdk client over streamable HTTP (or SSE) as a
// session-era client.
func sdkSession(t *testing.T, url string, sse bool, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return sdkSessionRoots(t, url, sse, opts)
}

// sdkSessionRoots is sdkSession for a client with roots.
func sdkSessionRoots(t *testing.T, url string, sse bool, opts *mcp.ClientOptions, roots ...*mcp.Root) *mcp.ClientSession {
	t.Helper()
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: authClient()}
	if sse {
		tr = &mcp.SSEClientTransport{Endpoint: url + "/sse", HTTPClient: authClient()}
	}
	// The SSE transport keeps its stream on the Connect context, so that
	// context must live as long as the session.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, opts)
	client.AddRoots(roots...)
	cs, err := client.Connect(ctx, tr, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func sdkTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestHTTPClients(t *testing.T) {
	_, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo,add,add_tool,progress"))
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", sse), func(t *testing.T) {
			changed := make(chan struct{}, 8)
			var progress atomic.Int32
			cs := sdkSession(t, srv.URL, sse, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					select {
					case changed <- struct{}{}:
					default:
					}
				},
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
			})
			if names := sdkTools(t, cs); !slices.Contains(names, "add") || !slices.Contains(names, "hub_list_servers") {
				t.Fatalf("tools = %v", names)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
			if err != nil || res.IsError {
				t.Fatalf("add: %v %v", res, err)
			}
			p := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3, "delay_ms": 1}}
			p.SetProgressToken("t1")
			if _, err := cs.CallTool(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			// The client runs notification handlers on their own
			// goroutine: the call may return before they ran.
			eventually(t, 10*time.Second, "a progress notification at the client", func() bool { return progress.Load() > 0 })
			name := fmt.Sprintf("late_%v", sse)
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_tool", Arguments: map[string]any{"name": name}}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("no tools/list_changed")
			}
		})
	}
}

// raw sends one HTTP request to the hub.
func raw(t *testing.T, method, url string, body string, hdr map[string][]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range hdr {
		if k == "Host" {
			req.Host = vs[0]
			continue
		}
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

var auth = []string{"Bearer " + testToken}

// TestHTTPSecurity covers B1, B2, B3, B7 and B8 of the security plan.
func TestHTTPSecurity(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("a", "-only", "echo"))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// A real session for the session-id cases.
	resp := raw(t, "POST", srv.URL+"/mcp", initBody, map[string][]string{"Authorization": auth})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	tests := []struct {
		name   string
		hdr    map[string][]string
		path   string
		body   string
		status int
		want   string // in the body
	}{
		{"B1 foreign host", map[string][]string{"Authorization": auth, "Host": {fmt.Sprintf("evil.example:%d", port)}}, "/mcp", initBody, 403, "host"},
		{"B1 foreign host, no token", map[string][]string{"Host": {"evil.example"}}, "/mcp", initBody, 403, "host"},
		{"own loopback host", map[string][]string{"Authorization": auth, "Host": {fmt.Sprintf("localhost:%d", port)}}, "/mcp", initBody, 200, ""},
		{"B2 foreign origin", map[string][]string{"Authorization": auth, "Origin": {"http://evil.example"}}, "/mcp", initBody, 403, "origin"},
		{"B2 null origin", map[string][]string{"Authorization": auth, "Origin": {"null"}}, "/mcp", initBody, 403, "null"},
		{"B2 two origins", map[string][]string{"Authorization": auth, "Origin": {"http://localhost", "http://localhost"}}, "/mcp", initBody, 403, "duplicate"},
		{"loopback origin", map[string][]string{"Authorization": auth, "Origin": {fmt.Sprintf("http://127.0.0.1:%d", port)}}, "/mcp", initBody, 200, ""},
		{"B3 no token", nil, "/mcp", initBody, 401, "missing bearer"},
		{"B3 wrong token", map[string][]string{"Authorization": {"Bearer nope"}}, "/mcp", initBody, 401, "invalid bearer"},
		{"B3 token with an extra character", map[string][]string{"Authorization": {"Bearer " + testToken + "x"}}, "/mcp", initBody, 401, "invalid bearer"},
		{"B3 token in the query", nil, "/mcp?token=" + testToken, initBody, 401, "query string"},
		{"B3 header and query token", map[string][]string{"Authorization": auth}, "/mcp?access_token=" + testToken, initBody, 401, "query string"},
		{"B3 metrics need the token", nil, "/metrics", "", 401, ""},
		{"healthz is open", nil, "/healthz", "", 200, "ok"},
		{"B7 unknown session", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {"NOSUCHSESSION"}}, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 404, "unknown"},
		{"B7 non-ASCII session", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {"séssion"}}, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, "malformed"},
		{"B7 no session", map[string][]string{"Authorization": auth}, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, "missing"},
		{"B8 bad protocol version", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"1999-01-01"}}, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 400, "unsupported"},
		{"good session", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-03-26"}}, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 200, "tools"},
		{"batch refused", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}}, "/mcp", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, 400, "batch"},
		{"wrong content type", map[string][]string{"Authorization": auth, "Content-Type": {"text/plain"}}, "/mcp", initBody, 415, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.sessionCount()
			method := "POST"
			if tt.body == "" {
				method = "GET"
			}
			resp := raw(t, method, srv.URL+tt.path, tt.body, tt.hdr)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(strings.ToLower(string(body)), tt.want) {
				t.Fatalf("status %d body %s; want %d containing %q", resp.StatusCode, body, tt.status, tt.want)
			}
			if resp.StatusCode == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: %v", resp.Header)
			}
			if resp.StatusCode == 403 {
				var e struct {
					ID    *json.RawMessage `json:"id"`
					Error struct{ Message string }
				}
				if json.Unmarshal(body, &e) != nil || e.ID != nil || e.Error.Message == "" {
					t.Errorf("403 body %s: want a JSON-RPC error without id", body)
				}
				if n := h.sessionCount(); n != before {
					t.Errorf("a refused request created a session (%d → %d)", before, n)
				}
			}
		})
	}
	// DELETE ends a session; it is then unknown.
	if resp := raw(t, "DELETE", srv.URL+"/mcp", "", map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}}); resp.StatusCode != 200 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	if resp := raw(t, "POST", srv.URL+"/mcp", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}}); resp.StatusCode != 404 {
		t.Errorf("after DELETE: %d, want 404", resp.StatusCode)
	}
}

// TestHTTPLimits covers B5 (body cap, endless body) and B9 (session cap).
func TestHTTPLimits(t *testing.T) {
	h, srv := startHTTPHub(t, &HTTPOptions{MaxBodyBytes: 4 << 20, MaxSessions: 3, BodyTimeout: 300 * time.Millisecond},
		fixtureSpec("a", "-only", "echo"))
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}`
	if resp := raw(t, "POST", srv.URL+"/mcp", big, map[string][]string{"Authorization": auth}); resp.StatusCode != 413 {
		t.Errorf("5 MiB body: %d, want 413", resp.StatusCode)
	}
	// A chunked body that never ends: the read deadline ends the request.
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"jsonrpc":"2.0",`)) }()
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", pr)
	req.Header.Set("Authorization", auth[0])
	req.Header.Set("Content-Type", "application/json")
	done := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	select {
	case code := <-done:
		t.Logf("endless body ended with %d", code)
	case <-time.After(10 * time.Second):
		t.Fatal("an endless body kept the request open")
	}
	// B9: a flood of concurrent initializes never opens more than the cap
	// of sessions: each is served (its session replacing an idle one) or
	// gets 503 with Retry-After (every session busy).
	const flood = 300
	codes := make(chan int, flood)
	var wg sync.WaitGroup
	for range flood {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(initBody))
			req.Header.Set("Authorization", auth[0])
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- -1
				return
			}
			if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
				codes <- -503
			} else {
				codes <- resp.StatusCode
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[200] < 3 || count[200]+count[503] != flood {
		t.Errorf("%d concurrent initializes: status counts %v, want at least 3×200 and the rest 503 with Retry-After", flood, count)
	}
	if n := h.sessionCount(); n != 3 {
		t.Errorf("%d sessions open, want the cap of 3", n)
	}
}

func TestHTTPIdleSessionExpiry(t *testing.T) {
	_, srv := startHTTPHub(t, &HTTPOptions{SessionIdleTimeout: 200 * time.Millisecond}, fixtureSpec("a", "-only", "echo"))
	resp := raw(t, "POST", srv.URL+"/mcp", initBody, map[string][]string{"Authorization": auth})
	sid := resp.Header.Get("Mcp-Session-Id")
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := raw(t, "POST", srv.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string][]string{"Authorization": auth, "Mcp-Session-Id": {sid}})
		if r.StatusCode == 404 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("idle session never expired")
		}
		time.Sleep(300 * time.Millisecond) // idle longer than the timeout
	}
}

// TestHTTPNeverForwardsClientToken covers B10: the client's bearer token
// never reaches an upstream; the upstream's own headers do.
func TestHTTPNeverForwardsClientToken(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	upSrv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	upSrv.AddTool(&mcp.Tool{Name: "who", Description: "d", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upSrv }, nil)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	defer up.Close()
	_, srv := startHTTPHub(t, nil, upstream.Spec{Name: "remote", URL: up.URL, Headers: map[string]string{"X-Upstream-Key": "k-for-upstream"}})
	cs := sdkSession(t, srv.URL, false, nil)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "who"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the upstream saw no request")
	}
	for _, h := range seen {
		for k, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, testToken) {
					t.Errorf("the client's token reached the upstream in %s", k)
				}
			}
		}
		if h.Get("X-Upstream-Key") != "k-for-upstream" {
			t.Errorf("upstream request without its configured header: %v", h)
		}
	}
}

// TestHTTPManySessions: 50 streamable and 10 SSE sessions list and call
// while an upstream is added; every one hears list_changed, no call fails.
func TestHTTPManySessions(t *testing.T) {
	h, srv := startHTTPHub(t, &HTTPOptions{MaxSessions: 100}, fixtureSpec("a", "-only", "echo,add"))
	const nStream, nSSE = 50, 10
	type sess struct {
		cs      *mcp.ClientSession
		changed chan struct{}
	}
	sessions := make([]sess, nStream+nSSE)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			ch := make(chan struct{}, 4)
			cs := sdkSession(t, srv.URL, i >= nStream, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					select {
					case ch <- struct{}{}:
					default:
					}
				},
			})
			sessions[i] = sess{cs, ch}
		})
	}
	wg.Wait()
	var failures atomic.Int32
	stop := make(chan struct{})
	for _, s := range sessions {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.cs.ListTools(context.Background(), nil); err != nil {
					failures.Add(1)
					t.Errorf("list: %v", err)
					return
				}
				res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": n, "b": 1}})
				if err != nil || res.IsError {
					failures.Add(1)
					t.Errorf("add: %v %v", res, err)
					return
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	if err := h.AddUpstream(fixtureSpec("b", "-only", "pid"), upstream.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, s := range sessions {
		select {
		case <-s.changed:
		case <-time.After(20 * time.Second):
			t.Errorf("session %d (sse=%v) got no list_changed", i, i >= nStream)
		}
	}
	close(stop)
	wg.Wait()
	if failures.Load() > 0 {
		t.Fatalf("%d sessions saw a failed call", failures.Load())
	}
	for _, s := range sessions[:3] {
		if names := sdkTools(t, s.cs); !slices.Contains(names, "pid") {
			t.Errorf("tools after the add: %v", names)
		}
	}
}

// TestHTTPBodyCap: a body over the cap gets 413, whether its length is
// declared (refused unread) or it streams without one (cut at the cap).
func TestHTTPBodyCap(t *testing.T) {
	_, srv := startHTTPHub(t, &HTTPOptions{MaxBodyBytes: 1 << 20, BodyTimeout: 30 * time.Second})
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(big)
		if chunked {
			body = io.MultiReader(strings.NewReader(big)) // no length known: sent chunked
		}
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", body)
		req.Header.Set("Authorization", auth[0])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("chunked=%v: %v", chunked, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "exceeds 1048576 bytes") {
			t.Errorf("chunked=%v: %d %s, want 413 naming the cap", chunked, resp.StatusCode, b)
		}
	}
}
