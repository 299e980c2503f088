package upstream

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-hub/mcp-hub/telemetry"
)

// BenchmarkHTTPCall measures one tools/call through a streamable HTTP link
// to the fixture (a separate process), answering with an SSE stream (as
// servers on the SDKs' defaults do) or with a JSON body. The allocations
// are the hub side's alone: the upstream runs in its own process.
//
//	go test -run '^$' -bench HTTPCall -benchmem ./upstream/
//
// "traced" calls as the hub does with tracing on: a client span per call
// (batched to an exporter that drops it), its context spliced into
// params._meta, the W3C headers on the POST.
func BenchmarkHTTPCall(b *testing.B) {
	for _, reply := range []string{"sse", "json", "sse/traced", "stateless", "both/session-client"} {
		b.Run(reply, func(b *testing.B) {
			var tr *telemetry.Tracer
			if reply == "sse/traced" {
				tr = telemetry.NewTracer(sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter())))
				defer func() { _ = tr.Shutdown(context.Background()) }()
			}
			args := []string{"-only", "echo"}
			switch reply {
			case "json":
				args = append(args, "-json-response")
			case "stateless":
				// 2026-07-28: per-request _meta and headers, a POST per call.
				args = append(args, "-era", "stateless")
			case "both/session-client":
				// A session-era client's calls to a server that speaks
				// both eras: on the session-era connection beside the
				// stateless one (sessionera.go).
				args = append(args, "-era", "both")
			}
			url := startHTTPFixture(b, "http", args...)
			m := NewManager(&Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), InitTimeout: 10 * time.Second})
			defer m.Close()
			u, err := m.Add(Spec{Name: "web", URL: url}, AddOptions{})
			if err != nil {
				b.Fatal(err)
			}
			params := []byte(`{"name":"echo","arguments":{"msg":"hello"}}`)
			ctx := context.Background()
			if reply == "both/session-client" {
				ctx = WithTag(ctx, sessionTag{})
			}
			deadline := time.Now().Add(10 * time.Second)
			for u.Status().State != StateConnected {
				if time.Now().After(deadline) {
					b.Fatalf("not connected: %+v", u.Status())
				}
				time.Sleep(10 * time.Millisecond)
			}
			b.ReportAllocs()
			b.SetParallelism(16) // 32 in flight on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					cs := tr.Client(nil, telemetry.Request{Method: "tools/call", Target: "echo"}, &telemetry.Upstream{Name: "web", Transport: "http", URL: url})
					p, _ := cs.InjectMeta(params)
					r, err := u.Call(telemetry.ContextWith(ctx, cs), "tools/call", p)
					cs.End(telemetry.Outcome{})
					if err != nil || r.Error != nil {
						b.Errorf("call: %v %s", err, r.Error)
						return
					}
				}
			})
		})
	}
}

// BenchmarkHTTPBigCall is BenchmarkHTTPCall with a 100 KiB result, one call
// at a time, beside the least a client can do for the same call: POST it
// and read the whole answer ("floor").
func BenchmarkHTTPBigCall(b *testing.B) {
	for _, reply := range []string{"sse", "json"} {
		args := []string{"-only", "big"}
		if reply == "json" {
			args = append(args, "-json-response")
		}
		url := startHTTPFixture(b, "http", args...)
		b.Run(reply+"/link", func(b *testing.B) {
			m := NewManager(&Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), InitTimeout: 10 * time.Second})
			defer m.Close()
			u, err := m.Add(Spec{Name: "web", URL: url}, AddOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for u.Status().State != StateConnected {
				time.Sleep(10 * time.Millisecond)
			}
			params := []byte(`{"name":"big","arguments":{"kib":100}}`)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if r, err := u.Call(context.Background(), "tools/call", params); err != nil || len(r.Result) < 100<<10 {
					b.Fatalf("call: %v (%d bytes)", err, len(r.Result))
				}
			}
		})
		b.Run(reply+"/floor", func(b *testing.B) {
			c := &http.Client{}
			post := func(sid, body string) *http.Response {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if sid != "" {
					req.Header.Set("Mcp-Session-Id", sid)
					req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				}
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				return resp
			}
			resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
			sid := resp.Header.Get("Mcp-Session-Id")
			drainClose(resp.Body)
			drainClose(post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resp := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"kib":100}}}`)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || len(body) < 100<<10 {
					b.Fatalf("%v (%d bytes)", err, len(body))
				}
			}
		})
	}
}
