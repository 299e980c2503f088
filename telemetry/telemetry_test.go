package telemetry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// memTracer returns a tracer that records ended spans in memory.
func memTracer(t *testing.T) (*Tracer, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr := NewTracer(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, exp
}

const (
	clientTrace = "0af7651916cd43dd8448eb211c80319c"
	clientSpan  = "b7ad6b7169203331"
	clientTP    = "00-" + clientTrace + "-" + clientSpan + "-01"
)

func TestServerSpanParent(t *testing.T) {
	tr, _ := memTracer(t)
	hdr := http.Header{}
	hdr.Set("traceparent", "00-11111111111111111111111111111111-2222222222222222-01")
	tests := []struct {
		name      string
		meta      string
		h         http.Header
		wantTrace string
		wantSpan  string
	}{
		{"_meta", `{"traceparent":"` + clientTP + `","tracestate":"k=v"}`, hdr, clientTrace, clientSpan},
		{"header when _meta has none", `{"progressToken":1}`, hdr, "11111111111111111111111111111111", "2222222222222222"},
		{"root", ``, nil, "", ""},
		{"malformed: root", `{"traceparent":"00-zz"}`, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := tr.Server([]byte(tt.meta), tt.h, nil, Request{Method: "tools/list", ID: []byte("1")})
			ro := sp.s.(sdktrace.ReadOnlySpan)
			parent := ro.Parent()
			if tt.wantTrace == "" {
				if parent.IsValid() {
					t.Fatalf("parent = %v, want a root", parent)
				}
				return
			}
			if parent.TraceID().String() != tt.wantTrace || parent.SpanID().String() != tt.wantSpan || !parent.IsRemote() {
				t.Fatalf("parent = %s/%s, want %s/%s", parent.TraceID(), parent.SpanID(), tt.wantTrace, tt.wantSpan)
			}
			if sp.SpanContext().TraceID().String() != tt.wantTrace {
				t.Fatalf("trace = %s", sp.SpanContext().TraceID())
			}
		})
	}
}

// TestMetaReplacesTheClients: the upstream's _meta names the hub's client
// span, keeps the client's tracestate and baggage, and every other member.
func TestMetaReplacesTheClients(t *testing.T) {
	tr, exp := memTracer(t)
	params := []byte(`{"name":"echo","_meta":{"traceparent":"` + clientTP + `","tracestate":"congo=t61","baggage":"user=alice","progressToken":"p1"},"arguments":{"x":1}}`)
	meta, _ := wire.Get(params, "_meta")
	srv := tr.Server(meta, nil, nil, Request{Method: "tools/call", Target: "echo", ID: []byte(`"a"`), Session: "stdio-1", Transport: "sse"})
	cs := tr.Client(srv, Request{Method: "tools/call", Target: "echo"}, &Upstream{Name: "up", Transport: "http", URL: "https://u:pw@example.com:8443/mcp?key=S3CRET"})
	out, err := cs.InjectMeta(params)
	if err != nil {
		t.Fatal(err)
	}
	newMeta, _ := wire.Get(out, "_meta")
	tp, ts, bag := TraceContext(newMeta)
	want := "00-" + clientTrace + "-" + cs.SpanContext().SpanID().String() + "-01"
	if tp != want || ts != "congo=t61" || bag != "user=alice" {
		t.Fatalf("_meta = %s, want traceparent %s", newMeta, want)
	}
	if !strings.Contains(string(out), `"progressToken":"p1"`) || !strings.Contains(string(out), `"arguments":{"x":1}`) {
		t.Fatalf("lost members: %s", out)
	}
	h := http.Header{}
	cs.SetHeaders(h)
	if h.Get("traceparent") != want || h.Get("tracestate") != "congo=t61" || h.Get("baggage") != "user=alice" {
		t.Fatalf("headers = %v", h)
	}
	cs.End(Outcome{Label: "ok"})
	srv.End(Outcome{Code: -32602})
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	client, server := spans[0], spans[1]
	if client.Parent.SpanID() != server.SpanContext.SpanID() || server.Parent.SpanID().String() != clientSpan {
		t.Fatalf("nesting: client's parent %s, server %s, server's parent %s", client.Parent.SpanID(), server.SpanContext.SpanID(), server.Parent.SpanID())
	}
	if server.Name != "tools/call echo" || server.SpanKind != trace.SpanKindServer || client.SpanKind != trace.SpanKindClient {
		t.Fatalf("names/kinds: %q %v %v", server.Name, server.SpanKind, client.SpanKind)
	}
	attrs := map[string]string{}
	for _, kv := range append(client.Attributes, server.Attributes...) {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	for k, v := range map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcp.session.id": "stdio-1", "jsonrpc.request.id": "a",
		"network.transport": "tcp", "server.address": "example.com", "server.port": "8443", "mcp_hub.upstream.name": "up",
		"rpc.response.status_code": "-32602", "error.type": "-32602",
	} {
		if attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, attrs[k], v)
		}
	}
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if v := kv.Value.String(); strings.Contains(v, "S3CRET") || strings.Contains(v, "pw") || strings.Contains(v, "alice") {
				t.Errorf("%s = %q: a secret (or the baggage) in an attribute", kv.Key, v)
			}
		}
	}
}

func TestNilIsOff(t *testing.T) {
	var tr *Tracer
	sp := tr.Server([]byte(`{"traceparent":"`+clientTP+`"}`), nil, nil, Request{Method: "x"})
	if sp != nil {
		t.Fatal("a span with tracing off")
	}
	cs := tr.Client(sp, Request{}, nil)
	cs.Retry("x")
	cs.Queued(time.Now())
	cs.SetTarget("tools/call", "x", "", true)
	cs.End(Outcome{})
	params := []byte(`{"a":1}`)
	if out, err := cs.InjectMeta(params); err != nil || &out[0] != &params[0] {
		t.Fatal("InjectMeta copied params with tracing off")
	}
	if ctx := ContextWith(context.Background(), nil); FromContext(ctx) != nil {
		t.Fatal("a span in the context")
	}
	if allocs := testing.AllocsPerRun(100, func() {
		sp := tr.Server(params, nil, nil, Request{Method: "x"})
		_, _ = sp.InjectMeta(params)
		sp.End(Outcome{})
		_ = ContextWith(context.Background(), sp)
	}); allocs != 0 {
		t.Fatalf("%v allocations per request with tracing off", allocs)
	}
}

func TestEnabled(t *testing.T) {
	tests := []struct {
		env  map[string]string
		cfg  Config
		want bool
		err  bool
	}{
		{nil, Config{}, false, false},
		{nil, Config{Endpoint: "http://127.0.0.1:4318"}, true, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, Config{}, true, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, Config{}, true, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, Config{}, true, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, Config{Endpoint: "http://c"}, false, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, Config{}, false, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, Config{}, false, true},
	}
	for _, tt := range tests {
		tt.cfg.Lookup = func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
		got, err := Enabled(tt.cfg)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("Enabled(%v, %+v) = %v, %v", tt.env, tt.cfg.Endpoint, got, err)
		}
	}
}

func TestSetup(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	if tr, err := Setup(context.Background(), Config{Lookup: none}); tr != nil || err != nil {
		t.Fatalf("Setup without an endpoint = %v, %v", tr, err)
	}
	for _, proto := range []string{"", ProtocolHTTP, ProtocolGRPC} {
		tr, err := Setup(context.Background(), Config{Endpoint: "http://127.0.0.1:1", Protocol: proto, Sampler: "traceidratio", SamplerArg: "0.5", Lookup: none})
		if err != nil || tr == nil {
			t.Fatalf("Setup(%q) = %v, %v", proto, tr, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_ = tr.Shutdown(ctx)
		cancel()
	}
	for _, cfg := range []Config{
		{Endpoint: "http://c", Protocol: "http/json"},
		{Endpoint: "http://c", Sampler: "sometimes"},
		{Endpoint: "http://c", Sampler: "traceidratio", SamplerArg: "2"},
	} {
		cfg.Lookup = none
		if _, err := Setup(context.Background(), cfg); err == nil {
			t.Errorf("Setup(%+v): no error", cfg)
		}
	}
}

// TestWaitsUnderTheRequest: the spans of waits find their request's span
// through a context (an OAuth token refresh, under the HTTP request that
// needed the token) or through W3C headers (an approval, under the admin
// tool's call that go-sdk runs).
func TestWaitsUnderTheRequest(t *testing.T) {
	tr, exp := memTracer(t)
	call := tr.Client(nil, Request{Method: "tools/call", Target: "x"}, &Upstream{Name: "up", Transport: "http", URL: "http://127.0.0.1:1/mcp"})
	ctx := ContextWith(context.Background(), call)
	if _, sp := Start(ctx, "oauth token refresh", AttrUpstream.String("up")); sp == nil {
		t.Fatal("no refresh span under the call")
	} else {
		sp.Finish(nil)
	}
	if _, sp := Start(context.Background(), "oauth token refresh"); sp != nil {
		t.Fatal("a refresh span without a traced request")
	}
	h := http.Header{}
	call.SetHeaders(h)
	approval := tr.Under(h, "approval wait", "up")
	approval.SetString("mcp_hub.approval.action", "accept")
	approval.Finish(nil)
	if tr.Under(http.Header{}, "approval wait", "up") != nil {
		t.Fatal("an approval span without a request's context")
	}
	call.End(Outcome{})
	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	for _, s := range spans[:2] {
		if s.Parent.SpanID() != call.SpanContext().SpanID() {
			t.Errorf("%s is not under the call's span", s.Name)
		}
	}
}

// TestSetupRefusesEndpointWithoutScheme: "localhost:4318" reads as a URL
// of scheme "localhost" and no host; the exporter would send every batch
// nowhere. Setup refuses it, naming where it came from and the URL meant.
func TestSetupRefusesEndpointWithoutScheme(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		cfg  Config
		want string
	}{
		{nil, Config{Endpoint: "localhost:4318"}, "the OTLP endpoint localhost:4318 (telemetry.endpoint) is no URL with a scheme and a host: write it as http://localhost:4318"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"}, Config{Endpoint: "http://ok:4318", Protocol: ProtocolGRPC},
			"the OTLP endpoint collector:4317 (OTEL_EXPORTER_OTLP_ENDPOINT) is no URL with a scheme and a host: write it as http://collector:4317"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http:///v1/traces"}, Config{}, "(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is no URL with a scheme and a host"},
	} {
		tt.cfg.Lookup = func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
		tr, err := Setup(context.Background(), tt.cfg)
		if tr != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Setup(%v, %q) = %v, %v; want the error %q", tt.env, tt.cfg.Endpoint, tr, err, tt.want)
		}
	}
}

// TestLogErrors: what the SDK reports (an export that failed) is a
// warning in the hub's log, once per message and quarter of an hour.
func TestLogErrors(t *testing.T) {
	var buf bytes.Buffer
	LogErrors(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { LogErrors(slog.New(slog.DiscardHandler)) })
	for range 3 {
		otel.Handle(errors.New(`traces export: Post "http://127.0.0.1:1/v1/traces": connection refused`))
	}
	if got := strings.Count(buf.String(), "level=WARN"); got != 1 || strings.Count(buf.String(), "level=DEBUG") != 2 || !strings.Contains(buf.String(), "connection refused") {
		t.Errorf("log after 3 failed exports:\n%s", buf.String())
	}
}

func TestBounded(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"echo", 5, "echo"},
		{"a\nb\x00c", 16, "a\uFFFDb\uFFFDc"},
		{strings.Repeat("x", 10), 5, "xxxxx…"},
		{"ééééé", 5, "éé…"}, // cut at a rune
	} {
		if got := bounded(tt.in, tt.max); got != tt.want {
			t.Errorf("bounded(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = bounded("tools_within_bounds", 64) }); n != 0 {
		t.Errorf("%v allocations for a value within bounds", n)
	}
}
