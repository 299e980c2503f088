package hub

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

var fixture string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hub-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixture, err = testbin.Build(dir, "./testdata/fixture")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// pipeClient is a minimal JSON-RPC client on an in-process stdio session.
type pipeClient struct {
	w       io.Writer
	mu      sync.Mutex
	waiting map[string]chan []byte
	notes   chan []byte
}

// startHub serves one in-process stdio session of a hub with the given
// upstreams and returns a client for it.
func startHub(tb testing.TB, opts *Options, specs ...upstream.Spec) (*Hub, *pipeClient) {
	tb.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range specs {
		if err := h.AddUpstream(s, upstream.AddOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() { h.Close() })
	return h, stdioClient(tb, h)
}

// stdioClient serves one in-process stdio session of h and returns an
// initialized client for it.
func stdioClient(tb testing.TB, h *Hub) *pipeClient {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = h.ServeStdio(ctx, inR, outW)
	}()
	c := &pipeClient{w: inW, waiting: map[string]chan []byte{}, notes: make(chan []byte, 1024)}
	go func() {
		r := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			m, err := wire.Parse(line)
			if err != nil {
				continue
			}
			if m.IsResponse() {
				c.mu.Lock()
				ch := c.waiting[string(m.ID)]
				delete(c.waiting, string(m.ID))
				c.mu.Unlock()
				if ch != nil {
					ch <- line
				}
				continue
			}
			select {
			case c.notes <- line:
			default:
			}
		}
	}()
	tb.Cleanup(func() {
		inW.Close()
		cancel()
		<-served
		outW.Close()
	})
	c.call(tb, 1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *pipeClient) send(line string) {
	_, _ = io.WriteString(c.w, line+"\n")
}

// call sends request id and returns the response line.
func (c *pipeClient) call(tb testing.TB, id int, method, params string) []byte {
	ch := make(chan []byte, 1)
	key := fmt.Sprint(id)
	c.mu.Lock()
	c.waiting[key] = ch
	c.mu.Unlock()
	c.send(`{"jsonrpc":"2.0","id":` + key + `,"method":"` + method + `","params":` + params + `}`)
	select {
	case line := <-ch:
		return line
	case <-time.After(30 * time.Second):
		tb.Fatalf("no response to %s %s", method, params)
		return nil
	}
}

func fixtureSpec(name string, args ...string) upstream.Spec {
	return upstream.Spec{Name: name, Command: fixture, Args: args}
}

func TestForwardsAndLists(t *testing.T) {
	_, c := startHub(t, nil, fixtureSpec("a", "-only", "echo,add"), fixtureSpec("b", "-only", "echo,pid"))
	list := c.call(t, 2, "tools/list", `{}`)
	for _, name := range []string{`"name":"echo"`, `"name":"add"`, `"name":"pid"`} {
		if !strings.Contains(string(list), name) {
			t.Errorf("tools/list lacks %s: %s", name, list)
		}
	}
	got := c.call(t, 3, "tools/call", `{"name":"add","arguments":{"a":1,"b":2}}`)
	if !strings.Contains(string(got), `"sum":3`) {
		t.Errorf("add = %s", got)
	}
}

// benchEras are the protocol eras the call benchmarks pin their upstream
// to: the session era's calls need no translation; the stateless era's
// carry _meta up and lose resultType on the way down (package era).
var benchEras = []string{"2025-11-25", "2026-07-28"}

// BenchmarkCallEcho measures one tools/call through an in-process stdio
// session to the fixture, with tracing off and on (spans batched to an
// exporter that drops them: what the hub pays, the export's network aside;
// the client sends a traceparent in _meta, as a traced client does), to an
// upstream of each era.
func BenchmarkCallEcho(b *testing.B) {
	for _, traced := range []bool{false, true} {
		for _, version := range benchEras {
			name, opts, params := "off", &Options{}, `{"name":"echo","arguments":{"msg":"hello"}}`
			if traced {
				name, opts.Tracer = "traced", benchTracer(b)
				params = `{"name":"echo","arguments":{"msg":"hello"},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`
			}
			b.Run(name+"/upstream="+version, func(b *testing.B) {
				spec := fixtureSpec("a", "-only", "echo,big")
				spec.ProtocolVersion = version
				_, c := startHub(b, opts, spec)
				c.call(b, 1000, "tools/list", `{}`)
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					c.call(b, 2000+i, "tools/call", params)
				}
			})
		}
	}
}

// benchTracer batches spans to an exporter that drops them.
func benchTracer(tb testing.TB) *telemetry.Tracer {
	tr := telemetry.NewTracer(sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter())))
	tb.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr
}

func BenchmarkCallEchoParallel(b *testing.B) {
	_, c := startHub(b, nil, fixtureSpec("a", "-only", "echo,big"))
	c.call(b, 1000, "tools/list", `{}`)
	var next sync.Mutex
	id := 2000
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			next.Lock()
			id++
			my := id
			next.Unlock()
			c.call(b, my, "tools/call", `{"name":"echo","arguments":{"msg":"hello"}}`)
		}
	})
}

func BenchmarkCallBig100K(b *testing.B) {
	for _, version := range benchEras {
		b.Run("upstream="+version, func(b *testing.B) {
			spec := fixtureSpec("a", "-only", "echo,big")
			spec.ProtocolVersion = version
			_, c := startHub(b, nil, spec)
			c.call(b, 1000, "tools/list", `{}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				c.call(b, 2000+i, "tools/call", `{"name":"big","arguments":{"kib":100}}`)
			}
		})
	}
}
