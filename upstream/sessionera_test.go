package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askEvents answers an upstream's sampling requests as a client would and
// records the connections that asked and the log messages that came.
type askEvents struct {
	mu       sync.Mutex
	askedOn  []*Conn
	messages []*Conn
}

func (e *askEvents) Notification(c *Conn, method string, _, _ []byte) {
	if method == "notifications/message" {
		e.mu.Lock()
		e.messages = append(e.messages, c)
		e.mu.Unlock()
	}
}

func (e *askEvents) Request(c *Conn, id []byte, method string, _, _ []byte) {
	e.mu.Lock()
	e.askedOn = append(e.askedOn, c)
	e.mu.Unlock()
	if method != "sampling/createMessage" {
		_ = c.Respond(context.Background(), id, nil, []byte(`{"code":-32601,"message":"not here"}`))
		return
	}
	_ = c.Respond(context.Background(), id, []byte(`{"role":"assistant","content":{"type":"text","text":"forty-two"},"model":"m"}`), nil)
}

// sessionTag is the tag of a session-era client's request.
type sessionTag struct{ level string }

func (t sessionTag) SessionEra() (string, bool) { return t.level, true }

// sessionEraManager runs a dual-era HTTP fixture whose tools ask their
// client with requests of their own in either era (-session-asks: as
// tools written against the session era's API do, and the reference SDKs'
// servers then fail them on a 2026-07-28 request).
func sessionEraManager(t *testing.T, fixtureArgs ...string) (*Upstream, *askEvents) {
	u, ev, _ := sessionEraManagerPosts(t, fixtureArgs...)
	return u, ev
}

// postRecord is a POST the hub sent: its JSON-RPC method ("" for a
// response), and its Mcp-Method and Mcp-Session-Id headers.
type postRecord struct{ method, header, session string }

// sessionEraManagerPosts is sessionEraManager with a proxy in front of the
// fixture that records every POST.
func sessionEraManagerPosts(t *testing.T, fixtureArgs ...string) (*Upstream, *askEvents, func() []postRecord) {
	target, err := url.Parse(startHTTPFixture(t, "http", append([]string{"-era", "both", "-conformance", "-session-asks"}, fixtureArgs...)...))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var posts []postRecord
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	rp.FlushInterval = -1 // event streams as they come
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			mu.Lock()
			posts = append(posts, postRecord{m.Method, r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Session-Id")})
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	endpoint := srv.URL + target.Path
	ev := &askEvents{}
	opts := fastOptions(t)
	opts.Events = ev
	opts.ClientCapabilities = func(*Spec) *mcp.ClientCapabilities {
		//lint:ignore SA1019 sampling is deprecated in 2026-07-28; the session era, which this is about, has it
		return &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}
	}
	m := newManager(t, opts)
	u, err := m.Add(Spec{Name: "dual", URL: endpoint}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 10*time.Second, StateConnected)
	if !u.Conn().Stateless() {
		t.Fatalf("negotiated %s with a dual-era server, want the newest", u.Conn().ProtocolVersion())
	}
	return u, ev, func() []postRecord {
		mu.Lock()
		defer mu.Unlock()
		return append([]postRecord(nil), posts...)
	}
}

func callTagged(t *testing.T, u *Upstream, tag any, tool, args string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := u.Call(WithTag(ctx, tag), "tools/call", []byte(`{"name":"`+tool+`","arguments":`+args+`}`))
	if err != nil || r.Error != nil {
		t.Fatalf("call %s: %s %v", tool, r.Error, err)
	}
	return string(r.Result)
}

// TestSessionEraClientCalls: a session-era client's call to a server that
// speaks both eras goes over a session-era connection beside the
// stateless one, where the tool asks that client as it would directly; a
// stateless client's call (and the hub's own) stays on the stateless
// connection, where the tool cannot ask.
func TestSessionEraClientCalls(t *testing.T) {
	u, ev, posts := sessionEraManagerPosts(t)
	main := u.Conn()

	if got := callTagged(t, u, nil, "test_sampling", `{"prompt":"q"}`); !strings.Contains(got, "sampling failed") {
		t.Errorf("untagged call on the stateless connection = %s, want the tool's failure to ask", got)
	}
	if got := callTagged(t, u, sessionTag{}, "test_sampling", `{"prompt":"q"}`); !strings.Contains(got, "LLM response: forty-two") {
		t.Fatalf("session-era client's call = %s, want the sampled answer", got)
	}
	ev.mu.Lock()
	asked := append([]*Conn(nil), ev.askedOn...)
	ev.mu.Unlock()
	if len(asked) != 1 || asked[0] == main || asked[0].Stateless() {
		t.Fatalf("asked on %v, want once on a session-era connection other than the stateless one", asked)
	}
	side := asked[0]

	// Once it is up, the fast path takes it too.
	done := make(chan string, 1)
	if _, ok := u.TryStartTag("tools/call", []byte(`{"name":"test_sampling","arguments":{"prompt":"q"}}`), sessionTag{}, func(r Reply, err error) {
		done <- string(r.Result) + string(r.Error)
	}); !ok {
		t.Fatal("TryStartTag took the slow path with the session-era connection up")
	}
	select {
	case got := <-done:
		if !strings.Contains(got, "forty-two") {
			t.Errorf("fast path = %s", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no answer on the fast path")
	}
	ev.mu.Lock()
	if n := len(ev.askedOn); n != 2 || ev.askedOn[1] != side {
		t.Errorf("asked %d times, the second on %p; want twice on %p", n, ev.askedOn[len(ev.askedOn)-1], side)
	}
	ev.mu.Unlock()

	// The client's log level is set on the session-era connection before
	// its call: the tool's debug messages reach the hub.
	callTagged(t, u, sessionTag{level: "debug"}, "log", `{"count":2,"level":"debug"}`)
	ev.mu.Lock()
	n := len(ev.messages)
	ev.mu.Unlock()
	if n != 2 {
		t.Errorf("%d log messages, want 2 at debug once the client asked for debug", n)
	}

	// Every POST of a request or notification carries Mcp-Method, the
	// session's too: the server's transport wants it on every POST.
	sessionPosts := 0
	for _, p := range posts() {
		if p.session != "" {
			sessionPosts++
		}
		if p.method != "" && p.header != p.method {
			t.Errorf("POST of %s (session %q) with Mcp-Method %q", p.method, p.session, p.header)
		}
	}
	if sessionPosts == 0 {
		t.Error("no POST on a session")
	}

	// It closes with the stateless connection.
	if err := u.m.Restart("dual"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-side.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session-era connection outlived its stateless connection")
	}
}

// TestSessionEraListedAsTheCatalog: the session-era connection carries
// only what it lists as the catalog (the stateless listing) has it.
func TestSessionEraListedAsTheCatalog(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b []string
		want []string
	}{
		{"same, members in another order",
			[]string{`{"name":"x","description":"d","inputSchema":{"type":"object","properties":{}}}`},
			[]string{`{"inputSchema":{"properties":{},"type":"object"},"description":"d","name":"x"}`}, []string{"x"}},
		{"another description", []string{`{"name":"x","description":"d"}`}, []string{`{"name":"x","description":"e"}`}, nil},
		{"another schema", []string{`{"name":"x","inputSchema":{"type":"object"}}`}, []string{`{"name":"x","inputSchema":{"type":"object","required":["a"]}}`}, nil},
		{"not in the catalog", []string{`{"name":"x"}`, `{"name":"y"}`}, []string{`{"name":"y"}`}, []string{"y"}},
		{"only in the catalog", []string{`{"name":"y"}`}, []string{`{"name":"x"}`, `{"name":"y"}`}, []string{"y"}},
		{"not JSON, no name", []string{`{"name":`, `{"title":"t"}`}, []string{`{"title":"t"}`}, nil},
		{"duplicate members", []string{`{"name":"x","d":1,"d":2}`}, []string{`{"name":"x","d":1,"d":2}`}, nil},
		{"numbers as written", []string{`{"name":"x","n":1}`}, []string{`{"name":"x","n":1.0}`}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := func(ss []string) []json.RawMessage {
				var out []json.RawMessage
				for _, s := range ss {
					out = append(out, json.RawMessage(s))
				}
				return out
			}
			got := sameDefinitions(raw(tt.a), raw(tt.b))
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for _, n := range tt.want {
				if !got[n] {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestSessionEraWithoutSessions: a server whose session era has no
// sessions (go-sdk's stateless handler answers initialize without one)
// gains a session-era client nothing: its calls stay on the stateless
// connection, and the hub does not try again for each call.
func TestSessionEraWithoutSessions(t *testing.T) {
	u, ev := sessionEraManager(t, "-era", "stateless")
	for range 2 {
		if got := callTagged(t, u, sessionTag{}, "test_sampling", `{"prompt":"q"}`); !strings.Contains(got, "sampling failed") {
			t.Errorf("call = %s, want the stateless connection's answer", got)
		}
	}
	d := u.Conn().dual
	d.mu.Lock()
	never, conn := d.never, d.conn
	d.mu.Unlock()
	if !never || conn != nil {
		t.Errorf("never %v, conn %v: want no session-era connection, and no more attempts", never, conn)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.askedOn) != 0 {
		t.Errorf("asked on %v", ev.askedOn)
	}
}

// TestSessionEraNotForEveryUpstream: only a stateless-era HTTP connection
// whose version the hub chose may have a session-era side.
func TestSessionEraNotForEveryUpstream(t *testing.T) {
	c := &Conn{}
	c.era.stateless = true
	for _, tt := range []struct {
		name string
		spec Spec
		c    *Conn
		want bool
	}{
		{"http, newest era", Spec{Transport: TransportHTTP}, c, true},
		{"http, pinned", Spec{Transport: TransportHTTP, ProtocolVersion: "2026-07-28"}, c, false},
		{"stdio", Spec{Transport: TransportStdio}, c, false},
		{"session era", Spec{Transport: TransportHTTP}, &Conn{}, false},
	} {
		if got := newSessionEra(nil, &tt.spec, tt.c) != nil; got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSessionEraCall(t *testing.T) {
	for _, tt := range []struct {
		name, method, params string
		tag                  any
		want                 string // the name, or "" for not one
	}{
		{"tool", "tools/call", `{"name":"t","arguments":{}}`, sessionTag{}, "t"},
		{"prompt", "prompts/get", `{"name":"p"}`, sessionTag{}, "p"},
		{"escaped name", "tools/call", `{"name":"t\u0031"}`, sessionTag{}, "t1"},
		{"stateless client", "tools/call", `{"name":"t"}`, nil, ""},
		{"a list", "tools/list", `{}`, sessionTag{}, ""},
		{"a resource", "resources/read", `{"uri":"x"}`, sessionTag{}, ""},
		{"a retry with answers", "tools/call", `{"name":"t","inputResponses":{}}`, sessionTag{}, ""},
		{"a retry with state", "tools/call", `{"name":"t","requestState":"s"}`, sessionTag{}, ""},
		{"no name", "tools/call", `{"arguments":{}}`, sessionTag{}, ""},
	} {
		name, _, ok := sessionEraCall(tt.method, []byte(tt.params), tt.tag)
		if got := string(name); ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s: %q %v, want %q", tt.name, got, ok, tt.want)
		}
	}
}

func TestMoreVerbose(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"debug", "", true},
		{"debug", "info", true},
		{"info", "info", false},
		{"error", "warning", false},
		{"", "error", false},
		{"loud", "", false},
		{"info", "loud", true},
	} {
		if got := moreVerbose(tt.a, tt.b); got != tt.want {
			t.Errorf("moreVerbose(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}
