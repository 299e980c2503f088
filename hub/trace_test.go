//lint:file-ignore SA1019 the tests exercise sampling, deprecated in 2026-07-28 but part of the protocol versions the hub serves.

package hub

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

const (
	clientTraceID = "0af7651916cd43dd8448eb211c80319c"
	clientSpanID  = "b7ad6b7169203331"
	clientParent  = "00-" + clientTraceID + "-" + clientSpanID + "-01"
	// Planted secrets: none may appear in a span.
	secretArg    = "S3CRET-ARGUMENT-v41"
	secretQuery  = "S3CRET-QUERY-v42"
	secretHeader = "S3CRET-HEADER-v43"
	secretEnv    = "S3CRET-ENV-v44"
)

// memTracer is a tracer that keeps the spans that ended.
func memTracer(t testing.TB) (*telemetry.Tracer, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tr := telemetry.NewTracer(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, exp
}

// traceSeen is the fixture's trace tool's answer.
type traceSeen struct {
	Meta   struct{ Traceparent, Tracestate, Baggage string }
	Header struct{ Traceparent, Tracestate string }
}

// headerTransport adds headers to every request (a client that sends the
// W3C traceparent header).
type headerTransport struct {
	h    http.Header
	base http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// spanIndex finds spans by id.
type spanIndex map[string]tracetest.SpanStub

func indexSpans(spans tracetest.SpanStubs) spanIndex {
	ix := spanIndex{}
	for _, s := range spans {
		ix[s.SpanContext.SpanID().String()] = s
	}
	return ix
}

// parentOf returns the span id's parent span, and whether it is one of ix.
func (ix spanIndex) parentOf(id string) (tracetest.SpanStub, bool) {
	s, ok := ix[id]
	if !ok {
		return tracetest.SpanStub{}, false
	}
	p, ok := ix[s.Parent.SpanID().String()]
	return p, ok
}

// spanIDOf returns the span id of a W3C traceparent, and checks its trace.
func spanIDOf(t *testing.T, traceparent string) string {
	t.Helper()
	parts := strings.Split(traceparent, "-")
	if len(parts) != 4 || parts[1] != clientTraceID {
		t.Fatalf("traceparent %q is not of the client's trace %s", traceparent, clientTraceID)
	}
	return parts[2]
}

// TestTraceThroughTheHub: a client's traceparent (in _meta, or the HTTP
// header) reaches a stdio and an HTTP upstream as the hub's client span,
// nested client → hub server span → hub client span; the client's
// tracestate and baggage travel on; an upstream's sampling request reaches
// the client under the same trace; no planted secret is in a span.
func TestTraceThroughTheHub(t *testing.T) {
	tr, exp := memTracer(t)
	// Session era: the trace tool's sampling is a request of the
	// upstream's own (a 2026-07-28 upstream asks with input_required).
	stdio := sessionEraSpec(fixtureSpec("stdio-up", "-only", "trace"))
	stdio.Env = map[string]string{"FIXTURE_KEY": secretEnv}
	web := httpFixture(t, "http-up", "-only", "trace")
	web.URL += "?key=" + secretQuery
	web.Headers = map[string]string{"X-Api-Key": secretHeader}
	// A 2026-07-28 upstream: the trace context beside the era's own _meta
	// keys and headers.
	modern := httpFixture(t, "http-modern", "-only", "trace", "-era", "stateless")
	_, srv := startHTTPHubOpts(t, &Options{Tracer: tr, Catalog: catalogPrefix()}, nil, stdio, web, modern)

	var mu sync.Mutex
	var sampled []string // the traceparent of each sampling request the client got
	opts := &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		tp, _ := r.Params.Meta["traceparent"].(string)
		mu.Lock()
		sampled = append(sampled, tp)
		mu.Unlock()
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
	}}
	cs := sdkSession(t, srv.URL, false, opts)
	hdr := http.Header{"Traceparent": {clientParent}, "Tracestate": {"congo=hdr"}}
	hcs := sdkSessionClient(t, srv.URL, &http.Client{Transport: headerTransport{hdr, authClient().Transport}}, opts)

	for _, up := range []string{"stdio-up", "http-up", "http-modern"} {
		t.Run(up+" _meta", func(t *testing.T) {
			exp.Reset()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
				Name:      up + "__trace",
				Arguments: map[string]any{"password": secretArg},
				Meta:      mcp.Meta{"traceparent": clientParent, "tracestate": "congo=t61rcWkgMzE", "baggage": "tenant=acme"},
			})
			seen := traceResult(t, res, err)
			if seen.Meta.Tracestate != "congo=t61rcWkgMzE" || seen.Meta.Baggage != "tenant=acme" {
				t.Errorf("the upstream got tracestate %q, baggage %q: the client's were dropped", seen.Meta.Tracestate, seen.Meta.Baggage)
			}
			if up != "stdio-up" && (seen.Header.Traceparent != seen.Meta.Traceparent || seen.Header.Tracestate != seen.Meta.Tracestate) {
				t.Errorf("W3C headers %+v differ from _meta %+v", seen.Header, seen.Meta)
			}
			checkNesting(t, exp, seen.Meta.Traceparent, up)
			checkNoSecrets(t, exp.GetSpans())
		})
		t.Run(up+" header", func(t *testing.T) {
			exp.Reset()
			res, err := hcs.CallTool(context.Background(), &mcp.CallToolParams{Name: up + "__trace"})
			seen := traceResult(t, res, err)
			if seen.Meta.Tracestate != "congo=hdr" {
				t.Errorf("tracestate %q, want the header's", seen.Meta.Tracestate)
			}
			checkNesting(t, exp, seen.Meta.Traceparent, up)
		})
		t.Run(up+" sampling", func(t *testing.T) {
			if up == "http-modern" {
				t.Skip("a 2026-07-28 upstream asks in an input_required result (TestTraceInputRequired)")
			}
			exp.Reset()
			mu.Lock()
			sampled = nil
			mu.Unlock()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
				Name: up + "__trace", Arguments: map[string]any{"sample": true}, Meta: mcp.Meta{"traceparent": clientParent},
			})
			seen := traceResult(t, res, err)
			mu.Lock()
			got := sampled
			mu.Unlock()
			if len(got) != 1 {
				t.Fatalf("the client got %d sampling requests", len(got))
			}
			ix := indexSpans(exp.GetSpans())
			ask := spanIDOf(t, got[0]) // the hub's client span of the sampling request
			s, ok := ix[ask]
			if !ok || s.SpanKind != trace.SpanKindClient || s.Name != "sampling/createMessage" {
				t.Fatalf("the sampling request's traceparent names %+v, not the hub's client span", s.Name)
			}
			srvSpan, ok := ix.parentOf(ask)
			if !ok || srvSpan.SpanKind != trace.SpanKindServer || srvSpan.Name != "sampling/createMessage" {
				t.Fatalf("the hub's sampling span's parent is %q, want its server span of the upstream's request", srvSpan.Name)
			}
			// The fixture exports no span here: the upstream's request is
			// attributed to the call it serves.
			if srvSpan.Parent.SpanID().String() != spanIDOf(t, seen.Meta.Traceparent) {
				t.Errorf("the upstream's sampling request is not under the hub's client span of the call")
			}
		})
	}
}

// TestTraceInputRequired: a 2026-07-28 upstream asks for sampling in an
// input_required result; the hub asks its session-era client, and that
// request carries the context of a hub client span under the call's client
// span (the one the upstream's answer completes), in the client's trace.
func TestTraceInputRequired(t *testing.T) {
	tr, exp := memTracer(t)
	_, srv := startHTTPHubOpts(t, &Options{Tracer: tr}, nil, fixtureSpec("modern", "-conformance"))
	var mu sync.Mutex
	var sampled []string
	cs := sdkSession(t, srv.URL, false, &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		tp, _ := r.Params.Meta["traceparent"].(string)
		mu.Lock()
		sampled = append(sampled, tp)
		mu.Unlock()
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
	}})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name: "test_input_required_result_sampling", Meta: mcp.Meta{"traceparent": clientParent},
	})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	mu.Lock()
	got := sampled
	mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("the client got %d sampling requests", len(got))
	}
	ix := indexSpans(exp.GetSpans())
	ask := spanIDOf(t, got[0])
	if s, ok := ix[ask]; !ok || s.SpanKind != trace.SpanKindClient || s.Name != "sampling/createMessage" {
		t.Fatalf("the sampling request's traceparent names %q, not the hub's client span of it", s.Name)
	}
	call, ok := ix.parentOf(ask)
	if !ok || call.SpanKind != trace.SpanKindClient || call.Name != "tools/call test_input_required_result_sampling" {
		t.Fatalf("the sampling span's parent is %q (kind %v), want the hub's client span of the call", call.Name, call.SpanKind)
	}
	server, ok := ix.parentOf(call.SpanContext.SpanID().String())
	if !ok || server.SpanKind != trace.SpanKindServer || server.Parent.SpanID().String() != clientSpanID {
		t.Fatalf("the call's client span is not under the hub's server span of the client's request")
	}
}

// TestTraceProgress: progress notifications carry the context of the hub's
// span of the request they report on.
func TestTraceProgress(t *testing.T) {
	tr, exp := memTracer(t)
	_, c := startHub(t, &Options{Tracer: tr}, fixtureSpec("a", "-only", "progress"))
	c.call(t, 2, "tools/call", `{"name":"progress","arguments":{"steps":2,"delay_ms":1},"_meta":{"progressToken":"pt","traceparent":"`+clientParent+`"}}`)
	var server string
	for _, s := range exp.GetSpans() {
		if s.SpanKind == trace.SpanKindServer && s.Name == "tools/call progress" {
			server = s.SpanContext.SpanID().String()
		}
	}
	if server == "" {
		t.Fatal("no server span of the call")
	}
	for got := 0; got < 2; {
		line := <-c.notes
		if !strings.Contains(string(line), "notifications/progress") {
			continue
		}
		got++
		var n struct {
			Params struct {
				Meta struct{ Traceparent string } `json:"_meta"`
			}
		}
		if err := json.Unmarshal(line, &n); err != nil {
			t.Fatalf("%s", line)
		}
		if spanIDOf(t, n.Params.Meta.Traceparent) != server {
			t.Errorf("progress carries %q, want the call's server span %s", n.Params.Meta.Traceparent, server)
		}
	}
}

// TestTraceOff: with tracing off the hub changes nothing: the upstream
// gets the client's trace context as the client sent it.
func TestTraceOff(t *testing.T) {
	_, c := startHub(t, nil, fixtureSpec("a", "-only", "trace"))
	line := c.call(t, 2, "tools/call", `{"name":"trace","_meta":{"traceparent":"`+clientParent+`","tracestate":"a=b"}}`)
	if !strings.Contains(string(line), `\"traceparent\":\"`+clientParent+`\"`) {
		t.Fatalf("with tracing off the upstream did not get the client's traceparent: %s", line)
	}
}

// catalogPrefix names tools <server>__<tool>.
func catalogPrefix() catalog.Options { return catalog.Options{Policy: catalog.PolicyPrefix} }

// sdkSessionClient is sdkSession with an HTTP client of the caller's.
func sdkSessionClient(t *testing.T, url string, hc *http.Client, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, opts).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, sessionEra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func traceResult(t *testing.T, res *mcp.CallToolResult, err error) traceSeen {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("trace: %s", text)
	}
	var seen traceSeen
	if err := json.Unmarshal([]byte(text), &seen); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return seen
}

// checkNesting: the upstream's parent is the hub's client span, under the
// hub's server span, under the client's span.
func checkNesting(t *testing.T, exp *tracetest.InMemoryExporter, upstreamParent, up string) {
	t.Helper()
	ix := indexSpans(exp.GetSpans())
	id := spanIDOf(t, upstreamParent)
	cs, ok := ix[id]
	if !ok || cs.SpanKind != trace.SpanKindClient || cs.Name != "tools/call trace" {
		t.Fatalf("the upstream's traceparent names %q (kind %v), want the hub's client span tools/call trace", cs.Name, cs.SpanKind)
	}
	ss, ok := ix.parentOf(id)
	if !ok || ss.SpanKind != trace.SpanKindServer || ss.Name != "tools/call "+up+"__trace" {
		t.Fatalf("the client span's parent is %q, want the hub's server span", ss.Name)
	}
	if got := ss.Parent.SpanID().String(); got != clientSpanID || !ss.Parent.IsRemote() {
		t.Fatalf("the server span's parent is %s, want the client's %s", got, clientSpanID)
	}
	attrs := map[string]string{}
	for _, kv := range cs.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["mcp_hub.upstream.name"] != up || attrs["gen_ai.tool.name"] != "trace" || attrs["mcp.method.name"] != "tools/call" {
		t.Errorf("client span attributes %v", attrs)
	}
}

// checkNoSecrets searches every name, attribute, event and status of the
// spans for the planted secrets.
func checkNoSecrets(t *testing.T, spans tracetest.SpanStubs) {
	t.Helper()
	for _, s := range spans {
		texts := []string{s.Name, s.Status.Description}
		for _, kv := range s.Attributes {
			texts = append(texts, string(kv.Key)+"="+kv.Value.String())
		}
		for _, e := range s.Events {
			texts = append(texts, e.Name)
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.String())
			}
		}
		for _, kv := range s.Resource.Attributes() {
			texts = append(texts, kv.Value.String())
		}
		for _, text := range texts {
			for _, secret := range []string{secretArg, secretQuery, secretHeader, secretEnv} {
				if strings.Contains(text, secret) {
					t.Errorf("span %q carries the secret %s: %s", s.Name, secret, text)
				}
			}
		}
	}
}

// TestTraceWaits: what a person sees as slow has a span under the call's
// client span: the start of an upstream stopped when idle (as a lazy one
// starts on its first call), a per-session instance's start,
// the wait for a free slot (maxInFlight), with the wait as an attribute.
func TestTraceWaits(t *testing.T) {
	tr, exp := memTracer(t)
	lazy := fixtureSpec("lazy", "-only", "echo")
	lazy.IdleTimeout = upstream.Duration(300 * time.Millisecond) // stopped when idle: the next call starts it
	perSession := fixtureSpec("mine", "-only", "counter")
	perSession.Scope = upstream.ScopeSession
	slow := fixtureSpec("slow", "-only", "sleep_ms")
	slow.MaxInFlight = 1
	h, c := startHub(t, &Options{Tracer: tr}, lazy, perSession, slow)
	c.call(t, 2, "tools/list", `{}`)
	up, _ := h.mgr.Get("lazy")
	deadline := time.Now().Add(20 * time.Second)
	for !up.Status().Idle {
		if time.Now().After(deadline) {
			t.Fatalf("the lazy upstream did not stop when idle: %+v", up.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}

	// under returns the names of the spans whose parent is the client
	// span of the call of tool.
	under := func(tool string) (names []string, client tracetest.SpanStub) {
		spans := exp.GetSpans()
		for _, s := range spans {
			if s.SpanKind == trace.SpanKindClient && s.Name == "tools/call "+tool {
				client = s
			}
		}
		for _, s := range spans {
			if s.Parent.SpanID() == client.SpanContext.SpanID() && s.Parent.IsValid() {
				names = append(names, s.Name)
			}
		}
		return names, client
	}
	c.call(t, 3, "tools/call", `{"name":"echo","arguments":{}}`)
	if names, _ := under("echo"); !slices.Contains(names, "upstream start") {
		t.Errorf("the call of an upstream stopped when idle has %q under it, want upstream start", names)
	}
	c.call(t, 4, "tools/call", `{"name":"counter","arguments":{}}`)
	if names, _ := under("counter"); !slices.Contains(names, "instance start") {
		t.Errorf("the first call of a per-session upstream has %q under it, want instance start", names)
	}
	exp.Reset()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.call(t, 5, "tools/call", `{"name":"sleep_ms","arguments":{"ms":300}}`)
	}()
	time.Sleep(50 * time.Millisecond)
	c.call(t, 6, "tools/call", `{"name":"sleep_ms","arguments":{"ms":1}}`)
	<-done
	var queued bool
	for _, s := range exp.GetSpans() {
		if s.Name == "queue wait" {
			queued = true
		}
		for _, kv := range s.Attributes {
			if kv.Key == telemetry.AttrQueueWait && kv.Value.AsFloat64() < 0.1 {
				t.Errorf("queue wait %v s, want the first call's 300 ms", kv.Value.AsFloat64())
			}
		}
	}
	if !queued {
		t.Error("the call that waited for a slot has no queue wait span")
	}
}

// TestTraceListenEndsOK: a 2026-07-28 client's subscriptions/listen
// stream ends when the client closes it, its normal end: the span is no
// error (every client that hung up counted as a failure).
func TestTraceListenEndsOK(t *testing.T) {
	tr, exp := memTracer(t)
	_, srv := startHTTPHubOpts(t, &Options{Tracer: tr}, nil, fixtureSpec("a", "-only", "echo"))
	cs, _ := statelessClient(t, srv.URL, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	var listen tracetest.SpanStub
	eventually(t, 10*time.Second, "the listen span", func() bool {
		for _, s := range exp.GetSpans() {
			if s.Name == "subscriptions/listen" {
				listen = s
				return true
			}
		}
		return false
	})
	if listen.Status.Code != codes.Unset {
		t.Errorf("the listen span ended %v %q, attributes %v; want no error", listen.Status.Code, listen.Status.Description, listen.Attributes)
	}
}

// TestTraceNamesAreBounded: a span is named after its tool or prompt only
// when the catalog knows it; a name a client made up leaves the name at the
// method (a trace backend indexes span names: one per made-up name would be
// unbounded, and could carry any text), and is an attribute only, bounded,
// as the request id and the resource URI a client sent are.
func TestTraceNamesAreBounded(t *testing.T) {
	tr, exp := memTracer(t)
	h, c := startHub(t, &Options{Tracer: tr}, fixtureSpec("a", "-conformance"))
	eventually(t, 10*time.Second, "a's tools", func() bool { return len(h.Catalog().ServerEntries("a")) > 0 })
	made := "nope\nIGNORE PREVIOUS " + strings.Repeat("x", 5000)
	long := strings.Repeat("7", 3000)
	calls := []struct{ id, method, params, name string }{
		{`1001`, "tools/call", `{"name":"test_simple_text","arguments":{}}`, "tools/call test_simple_text"},
		{`1002`, "tools/call", `{"name":` + jsonString(made) + `,"arguments":{}}`, "tools/call"},
		{`1003`, "prompts/get", `{"name":"test_simple_prompt"}`, "prompts/get test_simple_prompt"},
		{`1004`, "prompts/get", `{"name":` + jsonString(made) + `}`, "prompts/get"},
		{`"` + long + `"`, "resources/read", `{"uri":"test://` + long + `"}`, "resources/read"},
	}
	for _, cl := range calls {
		exp.Reset()
		ch := make(chan []byte, 1)
		c.mu.Lock()
		c.waiting[cl.id] = ch
		c.mu.Unlock()
		c.send(`{"jsonrpc":"2.0","id":` + cl.id + `,"method":"` + cl.method + `","params":` + cl.params + `}`)
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer to %s", cl.params)
		}
		var server *tracetest.SpanStub
		eventually(t, 10*time.Second, "the server span", func() bool {
			for _, s := range exp.GetSpans() {
				if s.SpanKind == trace.SpanKindServer {
					server = &s
					return true
				}
			}
			return false
		})
		if server.Name != cl.name {
			t.Errorf("%s %.60s: span %q, want %q", cl.method, cl.params, server.Name, cl.name)
		}
		for _, kv := range server.Attributes {
			limit := 128 + len("…") // names and ids
			if kv.Key == "mcp.resource.uri" {
				limit = 1024 + len("…")
			}
			if v := kv.Value.Emit(); len(v) > limit || strings.ContainsAny(v, "\n\x00") {
				t.Errorf("%s %.60s: attribute %s is %d bytes: %.80q", cl.method, cl.params, kv.Key, len(v), v)
			}
		}
	}
}
