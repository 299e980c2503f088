//lint:file-ignore SA1019 the test exercises sampling, deprecated in 2026-07-28 but part of the protocol versions the hub serves.

package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/telemetry"
)

// tracesEnv names the Jaeger all-in-one binary the trace test exports to
// (make test-traces builds it from tools/jaeger and sets it).
const tracesEnv = "MCPHUB_JAEGER"

// jaeger is a Jaeger all-in-one of the test's: OTLP receivers and the
// query API on loopback ports, spans in memory.
type jaeger struct {
	otlpHTTP, otlpGRPC, query string // host:port
}

func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	bin := os.Getenv(tracesEnv)
	if bin == "" {
		t.Skipf("SKIPPING the trace test (Jaeger all-in-one): run make test-traces (it builds Jaeger and sets %s)", tracesEnv)
	}
	j := &jaeger{otlpHTTP: freeAddr(t), otlpGRPC: freeAddr(t), query: freeAddr(t)}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}
  telemetry:
    metrics: {level: none}
    logs: {level: warn}
extensions:
  jaeger_query:
    storage: {traces: mem}
    http: {endpoint: %q}
    grpc: {endpoint: %q}
  jaeger_storage:
    backends:
      mem: {memory: {max_traces: 10000}}
receivers:
  otlp:
    protocols:
      grpc: {endpoint: %q}
      http: {endpoint: %q}
processors:
  batch: {timeout: 50ms}
exporters:
  jaeger_storage_exporter: {trace_storage: mem}
`, j.query, freeAddr(t), j.otlpGRPC, j.otlpHTTP)
	path := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("jaeger:\n%s", tail(log.String(), 4000))
		}
	})
	waitFor(t, 60*time.Second, "Jaeger's query API", func() bool {
		code, _ := httpGet("http://"+j.query+"/api/services", "")
		return code == http.StatusOK
	})
	return j
}

// span is a span as Jaeger's query API returns it.
type span struct {
	SpanID, OperationName, ProcessID string
	References                       []struct{ RefType, SpanID string }
	Tags                             []struct {
		Key   string
		Value any
	}
	service string
}

func (s span) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// trace returns the spans of a trace, by id.
func (j *jaeger) trace(traceID string) map[string]span {
	_, body := httpGet("http://"+j.query+"/api/traces/"+traceID, "")
	var resp struct {
		Data []struct {
			Spans     []span
			Processes map[string]struct{ ServiceName string }
		}
	}
	out := map[string]span{}
	if json.Unmarshal([]byte(body), &resp) != nil {
		return out
	}
	for _, d := range resp.Data {
		for _, s := range d.Spans {
			s.service = d.Processes[s.ProcessID].ServiceName
			out[s.SpanID] = s
		}
	}
	return out
}

// chain is a path of spans, leaf first, each the parent of the one before:
// "service operation".
func chain(spans map[string]span, leaf string) []string {
	var out []string
	for id := leaf; id != ""; {
		s, ok := spans[id]
		if !ok {
			break
		}
		out = append(out, s.service+" "+s.OperationName)
		id = s.parent()
	}
	return out
}

// waitChain waits until the trace holds the chain want from the span
// leaf up.
func (j *jaeger) waitChain(t *testing.T, traceID, leaf string, want []string) map[string]span {
	t.Helper()
	var spans map[string]span
	deadline := time.Now().Add(30 * time.Second)
	for {
		spans = j.trace(traceID)
		got := chain(spans, leaf)
		if strings.Join(got, " ← ") == strings.Join(want, " ← ") {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s from span %s:\n got  %s\n want %s", traceID, leaf, strings.Join(got, " ← "), strings.Join(want, " ← "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// traceClient is the test's MCP client: it exports a span of its own per
// call, whose context it sends in _meta (or the traceparent header).
type traceClient struct {
	tr      *telemetry.Tracer
	cs      *mcp.ClientSession
	mu      sync.Mutex
	sampled []string // the traceparent of each sampling request it got
}

func (c *traceClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		tp, _ := r.Params.Meta["traceparent"].(string)
		c.mu.Lock()
		c.sampled = append(c.sampled, tp)
		c.mu.Unlock()
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
	}}
}

// seen is the fixture's trace tool's answer.
type seen struct {
	Meta struct{ Traceparent string }
	Span string
}

// call calls tool under a new client span and returns the span's trace
// and span ids and what the upstream saw. With inMeta false the context
// goes only in the HTTP header (hdr, which the client's transport sends).
func (c *traceClient) call(t *testing.T, tool string, args map[string]any, inMeta bool, hdr *traceHeader) (traceID, spanID string, got seen) {
	t.Helper()
	sp := c.tr.Client(nil, telemetry.Request{Method: "tools/call", Target: tool}, nil)
	sc := sp.SpanContext()
	traceID, spanID = sc.TraceID().String(), sc.SpanID().String()
	var meta mcp.Meta
	if inMeta {
		meta = sp.MetaMap()
	} else {
		h := http.Header{}
		sp.SetHeaders(h)
		hdr.set(h)
	}
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	sp.End(telemetry.Outcome{})
	if err := c.tr.ForceFlush(context.Background()); err != nil {
		t.Fatalf("export the client's span: %v", err)
	}
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || json.Unmarshal([]byte(text), &got) != nil {
		t.Fatalf("%s: %s", tool, text)
	}
	return traceID, spanID, got
}

// TestTraces: one trace in Jaeger from the client through the hub to a
// stdio and an HTTP upstream, nested client → hub server span → hub client
// span → upstream span, with the context in _meta (stdio client, the hub
// configured by its telemetry section, OTLP/HTTP) and in the HTTP
// traceparent header (/mcp, the hub configured by OTEL_* variables,
// OTLP/gRPC); an upstream's sampling request reaches the client in the
// same trace; a hub with tracing off exports nothing and passes the
// client's context on unchanged.
func TestTraces(t *testing.T) {
	j := startJaeger(t)
	hubBin, fixture := bins(t)
	otlp := "http://" + j.otlpHTTP
	fixtureEnv := func(service string) []string {
		return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp, "OTEL_SERVICE_NAME=" + service, "OTEL_BSP_SCHEDULE_DELAY=50"}
	}
	webFixture := testbin.ListenEnv(t, os.Stderr, fixtureEnv("fixture-http"), fixture, "-transport", "http", "-addr", "127.0.0.1:0", "-only", "trace")
	servers := func(telemetrySection string) string {
		return fmt.Sprintf(`catalog: {policy: prefix}
%s
mcpServers:
  stdio-up:
    command: %q
    args: [-only, trace]
    # the session era: the trace tool's sampling is a request of its own
    protocolVersion: "2025-11-25"
    env: {OTEL_EXPORTER_OTLP_ENDPOINT: %q, OTEL_SERVICE_NAME: fixture-stdio, OTEL_BSP_SCHEDULE_DELAY: "50"}
  http-up:
    url: %q
`, telemetrySection, fixture, otlp, webFixture)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clientTracer, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: otlp, ServiceName: "test-client"})
	if err != nil || clientTracer == nil {
		t.Fatalf("the test client's tracer: %v", err)
	}
	t.Cleanup(func() { _ = clientTracer.Shutdown(context.Background()) })

	// A stdio client; the hub's telemetry section names the endpoint.
	stdioCfg := write("stdio.yaml", servers("telemetry: {endpoint: "+otlp+", serviceName: mcp-hub-stdio}"))
	c := &traceClient{tr: clientTracer}
	hub := exec.Command(hubBin, "--config", stdioCfg, "--data-dir", filepath.Join(dir, "d1"))
	hub.Env = append(os.Environ(), "OTEL_BSP_SCHEDULE_DELAY=50")
	hub.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, c.options()).
		Connect(context.Background(), &mcp.CommandTransport{Command: hub}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c.cs = cs
	waitTools(t, cs, "stdio-up__trace", "http-up__trace")
	for _, up := range []string{"stdio-up", "http-up"} {
		t.Run("stdio client, "+up, func(t *testing.T) {
			traceID, clientSpan, got := c.call(t, up+"__trace", nil, true, nil)
			if !strings.HasPrefix(got.Meta.Traceparent, "00-"+traceID+"-") || got.Span == "" {
				t.Fatalf("the upstream got traceparent %q (own span %q), want one of trace %s", got.Meta.Traceparent, got.Span, traceID)
			}
			spans := j.waitChain(t, traceID, got.Span, []string{
				"fixture-" + strings.TrimSuffix(up, "-up") + " tools/call trace",
				"mcp-hub-stdio tools/call trace",
				"mcp-hub-stdio tools/call " + up + "__trace",
				"test-client tools/call " + up + "__trace",
			})
			if root := spans[clientSpan]; root.OperationName == "" {
				t.Errorf("the client's span %s is not the trace's root", clientSpan)
			}
		})
	}
	t.Run("sampling back to the client", func(t *testing.T) {
		traceID, _, _ := c.call(t, "stdio-up__trace", map[string]any{"sample": true}, true, nil)
		c.mu.Lock()
		asked := c.sampled
		c.mu.Unlock()
		if len(asked) != 1 || !strings.HasPrefix(asked[0], "00-"+traceID+"-") {
			t.Fatalf("the client's sampling requests carried %q, want trace %s", asked, traceID)
		}
		askSpan := strings.Split(asked[0], "-")[2]
		j.waitChain(t, traceID, askSpan, []string{
			"mcp-hub-stdio sampling/createMessage", // the hub's client span to the client
			"mcp-hub-stdio sampling/createMessage", // its server span of the upstream's request
			"fixture-stdio tools/call trace",
			"mcp-hub-stdio tools/call trace",
			"mcp-hub-stdio tools/call stdio-up__trace",
			"test-client tools/call stdio-up__trace",
		})
	})

	// /mcp with the traceparent header; OTEL_* variables, gRPC.
	httpCfg := write("http.yaml", servers(""))
	addr := freeAddr(t)
	startHub(t, hubBin, httpCfg, filepath.Join(dir, "d2"), addr,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+j.otlpGRPC, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_SERVICE_NAME=mcp-hub-http", "OTEL_BSP_SCHEDULE_DELAY=50")
	hdr := &traceHeader{}
	hc := &http.Client{Transport: headerRoundTripper{hdr: hdr, token: teamToken}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	hcs, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hcs.Close() })
	waitTools(t, hcs, "stdio-up__trace", "http-up__trace")
	hclient := &traceClient{tr: clientTracer, cs: hcs}
	for _, up := range []string{"stdio-up", "http-up"} {
		t.Run("/mcp with the header, "+up, func(t *testing.T) {
			traceID, _, got := hclient.call(t, up+"__trace", nil, false, hdr)
			j.waitChain(t, traceID, got.Span, []string{
				"fixture-" + strings.TrimSuffix(up, "-up") + " tools/call trace",
				"mcp-hub-http tools/call trace",
				"mcp-hub-http tools/call " + up + "__trace",
				"test-client tools/call " + up + "__trace",
			})
		})
	}

	// Tracing off: nothing of the hub's in the trace, the client's context
	// passed on as it was.
	t.Run("off", func(t *testing.T) {
		offCfg := write("off.yaml", servers(""))
		hub := exec.Command(hubBin, "--config", offCfg, "--data-dir", filepath.Join(dir, "d3"))
		hub.Stderr = os.Stderr
		ocs, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, nil).
			Connect(context.Background(), &mcp.CommandTransport{Command: hub}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer ocs.Close()
		waitTools(t, ocs, "stdio-up__trace")
		oc := &traceClient{tr: clientTracer, cs: ocs}
		traceID, clientSpan, got := oc.call(t, "stdio-up__trace", nil, true, nil)
		if want := "00-" + traceID + "-" + clientSpan + "-01"; got.Meta.Traceparent != want {
			t.Fatalf("with tracing off the upstream got %q, want the client's %s", got.Meta.Traceparent, want)
		}
		spans := j.waitChain(t, traceID, got.Span, []string{"fixture-stdio tools/call trace", "test-client tools/call stdio-up__trace"})
		for _, s := range spans {
			if strings.HasPrefix(s.service, "mcp-hub") {
				t.Errorf("a span of the hub with tracing off: %s %s", s.service, s.OperationName)
			}
		}
	})
}

// waitTools waits until the catalog lists the tools (upstreams connect in
// the background).
func waitTools(t *testing.T, cs *mcp.ClientSession, names ...string) {
	t.Helper()
	waitFor(t, 30*time.Second, "the tools "+strings.Join(names, ", "), func() bool {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			return false
		}
		have := map[string]bool{}
		for _, tl := range res.Tools {
			have[tl.Name] = true
		}
		for _, n := range names {
			if !have[n] {
				return false
			}
		}
		return true
	})
}

// startHub runs mcp-hub serve --http addr with the team token and extra
// environment, until the test ends.
func startHub(t *testing.T, bin, cfg, dataDir, addr string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", cfg, "--data-dir", dataDir, "--http", addr)
	cmd.Env = append(append(os.Environ(), "MCP_HUB_HTTP__TOKEN="+teamToken), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	waitFor(t, 30*time.Second, "the hub's /healthz", func() bool {
		code, _ := httpGet("http://"+addr+"/healthz", "")
		return code == http.StatusOK
	})
	return cmd
}

// traceHeader holds the W3C headers of the client's current call.
type traceHeader struct {
	mu sync.Mutex
	h  http.Header
}

func (t *traceHeader) set(h http.Header) {
	t.mu.Lock()
	t.h = h
	t.mu.Unlock()
}

// headerRoundTripper sends the token and the current trace headers.
type headerRoundTripper struct {
	hdr   *traceHeader
	token string
}

func (h headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.token)
	h.hdr.mu.Lock()
	for k, v := range h.hdr.h {
		r.Header[k] = v
	}
	h.hdr.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// syncBuffer is a bytes.Buffer safe for a process's two output streams.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
