//lint:file-ignore SA1019 the tests exercise sampling, roots and logging, deprecated in 2026-07-28 but part of the protocol versions the hub serves.

package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// httpFixture runs the fixture serving streamable HTTP and returns a spec
// for it.
func httpFixture(t *testing.T, name string, args ...string) upstream.Spec {
	t.Helper()
	url := testbin.Listen(t, os.Stderr, fixture, append([]string{"-transport", "http", "-addr", "127.0.0.1:0"}, args...)...)
	return upstream.Spec{Name: name, URL: url, Transport: upstream.TransportHTTP}
}

// routeClient is a go-sdk client session that answers sampling, elicitation
// and roots with its own tag, and records the log messages it gets.
type routeClient struct {
	cs       *mcp.ClientSession
	tag      string
	logs     atomic.Int32
	elicits  atomic.Int32
	progress atomic.Int32
}

func newRouteClient(t *testing.T, url string, sse bool, tag string) *routeClient {
	t.Helper()
	rc := &routeClient{tag: tag}
	opts := &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "sampled by " + tag}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rc.elicits.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "answered by " + tag}}, nil
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { rc.logs.Add(1) },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.ProgressToken == "tok-"+tag {
				rc.progress.Add(1)
			}
		},
	}
	rc.cs = sdkSessionRoots(t, url, sse, opts, &mcp.Root{URI: "file:///" + tag, Name: tag})
	return rc
}

func (rc *routeClient) call(t *testing.T, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := rc.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %s: %v", rc.tag, name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// TestRouteOneSession: an upstream's sampling, elicitation, roots and log
// messages reach the one session calling it, over stdio and HTTP upstreams
// and streamable and SSE clients.
func TestRouteOneSession(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sse      bool
		http     bool
		protocol string
	}{
		{"stdio upstream, streamable client", false, false, "2025-11-25"},
		{"stdio upstream, SSE client", true, false, "2025-11-25"},
		{"HTTP upstream, streamable client", false, true, "2025-11-25"},
		{"stdio upstream on 2026-07-28", false, false, "2026-07-28"},
		{"HTTP upstream on 2026-07-28", true, true, "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fixtureSpec("fx", "-only", "sample,elicit,roots,log")
			if tc.http {
				spec = httpFixture(t, "fx", "-only", "sample,elicit,roots,log")
			}
			spec.ProtocolVersion = tc.protocol
			_, srv := startHTTPHub(t, nil, spec)
			rc := newRouteClient(t, srv.URL, tc.sse, "A")
			eventually(t, 10*time.Second, "the upstream's tools", func() bool {
				res, err := rc.cs.ListTools(context.Background(), nil)
				return err == nil && len(res.Tools) > 4
			})
			if got, isErr := rc.call(t, "sample", map[string]any{"prompt": "hi"}); isErr || got != "sampled by A" {
				t.Errorf("sample: %q (isError %v)", got, isErr)
			}
			if got, isErr := rc.call(t, "elicit", map[string]any{"message": "q?"}); isErr || !strings.Contains(got, "answered by A") {
				t.Errorf("elicit: %q (isError %v)", got, isErr)
			}
			if got, isErr := rc.call(t, "roots", nil); isErr || !strings.Contains(got, "file:///A") {
				t.Errorf("roots: %q (isError %v)", got, isErr)
			}
			// No level set: no log messages.
			rc.call(t, "log", map[string]any{"count": 2})
			if err := rc.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // the hub sets the upstream's level
			rc.call(t, "log", map[string]any{"count": 3, "level": "warning"})
			rc.call(t, "log", map[string]any{"count": 4, "level": "debug"}) // below the session's level
			eventually(t, 10*time.Second, "3 log messages", func() bool { return rc.logs.Load() >= 3 })
			time.Sleep(100 * time.Millisecond)
			if n := rc.logs.Load(); n != 3 {
				t.Errorf("%d log messages, want the 3 at or above info", n)
			}
		})
	}
}

// TestRouteTwoSessions: two sessions call the same shared (HTTP) upstream at
// once; each gets only its own progress, logs, elicitation and sampling.
func TestRouteTwoSessions(t *testing.T) {
	spec := httpFixture(t, "fx", "-only", "sample,elicit,log,progress")
	spec.ProtocolVersion = "2025-11-25" // attributed by the response stream they arrive on
	_, srv := startHTTPHub(t, nil, spec)
	a := newRouteClient(t, srv.URL, false, "A")
	b := newRouteClient(t, srv.URL, true, "B")
	for _, rc := range []*routeClient{a, b} {
		if err := rc.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "the upstream's tools", func() bool {
		res, err := a.cs.ListTools(context.Background(), nil)
		return err == nil && len(res.Tools) > 4
	})
	time.Sleep(100 * time.Millisecond) // the hub sets the upstream's log level
	var wg sync.WaitGroup
	for i, rc := range []*routeClient{a, b} {
		wg.Go(func() {
			for range 5 {
				if got, isErr := rc.call(t, "elicit", map[string]any{"message": "q?"}); isErr || !strings.Contains(got, "answered by "+rc.tag) {
					t.Errorf("%s elicit: %q", rc.tag, got)
				}
				if got, isErr := rc.call(t, "sample", map[string]any{"prompt": "p"}); isErr || got != "sampled by "+rc.tag {
					t.Errorf("%s sample: %q", rc.tag, got)
				}
			}
			rc.call(t, "log", map[string]any{"count": 3 + 4*i})
			p := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 4, "delay_ms": 5}}
			p.SetProgressToken("tok-" + rc.tag)
			if _, err := rc.cs.CallTool(context.Background(), p); err != nil {
				t.Errorf("%s progress: %v", rc.tag, err)
			}
		})
	}
	wg.Wait()
	eventually(t, 10*time.Second, "both sessions' logs", func() bool { return a.logs.Load() >= 3 && b.logs.Load() >= 7 })
	time.Sleep(200 * time.Millisecond)
	if a.logs.Load() != 3 || b.logs.Load() != 7 {
		t.Errorf("log messages: A got %d (want its 3), B got %d (want its 7)", a.logs.Load(), b.logs.Load())
	}
	if a.elicits.Load() != 5 || b.elicits.Load() != 5 {
		t.Errorf("elicitations: A answered %d, B %d; want 5 each", a.elicits.Load(), b.elicits.Load())
	}
	if a.progress.Load() == 0 || b.progress.Load() == 0 {
		t.Errorf("progress with the session's own token: A %d, B %d", a.progress.Load(), b.progress.Load())
	}
}

// TestRouteAmbiguous: while two sessions wait on one stdio upstream, a
// request it sends cannot be attributed: it is refused with a clear error
// and reaches neither client; log messages reach neither.
func TestRouteAmbiguous(t *testing.T) {
	spec := fixtureSpec("fx", "-only", "elicit,sleep_ms,log")
	spec.ProtocolVersion = "2025-11-25" // requests without a link to the call
	h, srv := startHTTPHub(t, nil, spec)
	a := newRouteClient(t, srv.URL, false, "A")
	b := newRouteClient(t, srv.URL, false, "B")
	for _, rc := range []*routeClient{a, b} {
		if err := rc.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "the upstream", func() bool { return h.settled() && len(h.Catalog().Tools()) > 3 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.call(t, "sleep_ms", map[string]any{"ms": 1500})
	}()
	eventually(t, 10*time.Second, "A's call in flight", func() bool {
		u, _ := h.Manager().Get("fx")
		c := u.Conn()
		return c != nil && len(c.Tags()) == 1
	})
	got, isErr := b.call(t, "elicit", map[string]any{"message": "whose?"})
	// It said "which of 2 client sessions", where 2 meant "more than one",
	// and not what to do.
	if !isErr || !strings.Contains(got, "cannot tell which client session this elicitation/create is for: more than one client session is waiting on upstream \"fx\"") ||
		!strings.Contains(got, "set the server's scope to session") {
		t.Errorf("elicit while two sessions wait: %q (isError %v)", got, isErr)
	}
	b.call(t, "log", map[string]any{"count": 2})
	<-done
	if a.elicits.Load()+b.elicits.Load() != 0 {
		t.Errorf("an unattributable elicitation reached a client (A %d, B %d)", a.elicits.Load(), b.elicits.Load())
	}
	if a.logs.Load()+b.logs.Load() != 0 {
		t.Errorf("unattributable log messages reached clients (A %d, B %d)", a.logs.Load(), b.logs.Load())
	}
}

// TestRoutePolicy: an upstream whose spec forbids elicitation is not told
// the hub can elicit, and a client that does not declare sampling gets no
// sampling request; the upstream's call fails with an error that says so.
func TestRoutePolicy(t *testing.T) {
	no := false
	spec := fixtureSpec("fx", "-only", "elicit,sample")
	spec.ProtocolVersion = "2025-11-25"
	spec.AllowElicitation = &no
	_, srv := startHTTPHub(t, nil, spec)
	cs := sdkSession(t, srv.URL, false, nil) // declares nothing
	eventually(t, 10*time.Second, "the upstream's tools", func() bool {
		res, err := cs.ListTools(context.Background(), nil)
		return err == nil && len(res.Tools) > 2
	})
	for _, c := range []struct{ tool, want string }{
		// Not declared to the upstream at all: it knows not to ask.
		{"elicit", "client does not support elicitation"},
		{"sample", "did not declare the sampling capability"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"message": "m", "prompt": "p"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.Content)
		if !res.IsError || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %s, want an error containing %q", c.tool, b, c.want)
		}
	}
}

func TestSecretField(t *testing.T) {
	tests := []struct {
		props string
		want  string
	}{
		{`{"answer":{"type":"string"}}`, ""},
		{`{"username":{"type":"string"},"email":{"type":"string","format":"email"}}`, ""},
		{`{"password":{"type":"string"}}`, "password"},
		{`{"api_key":{"type":"string"}}`, "api_key"},
		{`{"GitHubToken":{"type":"string"}}`, "GitHubToken"},
		{`{"code":{"type":"string","format":"password"}}`, "code"},
		{`{"passphrase":{"type":"string"}}`, "passphrase"},
		{`{"client_secret":{"type":"string"}}`, "client_secret"},
		{`{"compass":{"type":"string"}}`, ""},
		{`{"db_pass":{"type":"string"}}`, "db_pass"},
	}
	for _, tt := range tests {
		params := fmt.Sprintf(`{"message":"m","requestedSchema":{"type":"object","properties":%s}}`, tt.props)
		if got := secretField([]byte(params)); got != tt.want {
			t.Errorf("secretField(%s) = %q, want %q", tt.props, got, tt.want)
		}
	}
}

// TestRouteMultiRoundTrip: an upstream speaking 2026-07-28 asks for client
// input in its results; the hub asks the calling session and retries, so
// the client sees ordinary sampling, elicitation and roots requests and an
// ordinary result. Two sessions at once each answer only their own.
func TestRouteMultiRoundTrip(t *testing.T) {
	spec := fixtureSpec("fx", "-only", "sample,elicit,roots")
	spec.ProtocolVersion = "2026-07-28"
	h, srv := startHTTPHub(t, nil, spec)
	eventually(t, 10*time.Second, "the upstream", func() bool { return h.settled() && len(h.Catalog().Tools()) > 3 })
	if u, _ := h.Manager().Get("fx"); u.Status().ProtocolVersion != "2026-07-28" {
		t.Fatalf("upstream speaks %q", u.Status().ProtocolVersion)
	}
	a := newRouteClient(t, srv.URL, false, "A")
	b := newRouteClient(t, srv.URL, true, "B")
	var wg sync.WaitGroup
	for _, rc := range []*routeClient{a, b} {
		wg.Go(func() {
			for range 3 {
				if got, isErr := rc.call(t, "sample", map[string]any{"prompt": "p"}); isErr || got != "sampled by "+rc.tag {
					t.Errorf("%s sample: %q", rc.tag, got)
				}
				if got, isErr := rc.call(t, "elicit", map[string]any{"message": "q"}); isErr || !strings.Contains(got, "answered by "+rc.tag) {
					t.Errorf("%s elicit: %q", rc.tag, got)
				}
				if got, isErr := rc.call(t, "roots", map[string]any{}); isErr || !strings.Contains(got, "file:///"+rc.tag) {
					t.Errorf("%s roots: %q", rc.tag, got)
				}
			}
		})
	}
	wg.Wait()
	if a.elicits.Load() != 3 || b.elicits.Load() != 3 {
		t.Errorf("elicitations answered: A %d, B %d; want 3 each", a.elicits.Load(), b.elicits.Load())
	}
	// A client that cannot answer gets a clear error.
	cs := sdkSession(t, srv.URL, false, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{"prompt": "p"}})
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0].(*mcp.TextContent).Text), "did not declare the sampling capability") {
		t.Errorf("sample from a client without sampling: %v %v", res, err)
	}
}

// TestParkedCallIsNamed: a 2026-07-28 client's call that got input_required
// and was never retried still waits on the shared upstream (its client may
// come back until the call's timeout, and the upstream may ask it again
// meanwhile), so another session's elicitation is refused as ambiguous;
// the refusal says that one of the waiting calls is such a call.
func TestParkedCallIsNamed(t *testing.T) {
	spec := fixtureSpec("fx", "-only", "elicit")
	spec.ProtocolVersion = "2025-11-25"
	h, srv := startHTTPHub(t, nil, spec)
	eventually(t, 10*time.Second, "the upstream", func() bool { return h.settled() && len(h.Catalog().ServerEntries("fx")) > 0 })
	body := strings.Replace(statelessBody("7", "tools/call", `{"name":"elicit","arguments":{"message":"first?"}}`),
		`"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`, 1)
	resp := raw(t, "POST", srv.URL+"/mcp", body, map[string][]string{"Authorization": auth,
		"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"elicit"}})
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(got), "input_required") {
		t.Fatalf("the stateless call was not parked: %s", got)
	}
	b := newRouteClient(t, srv.URL, false, "B")
	text, isErr := b.call(t, "elicit", map[string]any{"message": "whose?"})
	if !isErr || !strings.Contains(text, "more than one client session is waiting") ||
		!strings.Contains(text, "one of them is a client's call answered with input_required") {
		t.Errorf("elicit beside a parked call: %q (isError %v)", text, isErr)
	}
	if b.elicits.Load() != 0 {
		t.Error("the elicitation reached a client")
	}
}
