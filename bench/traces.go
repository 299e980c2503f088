package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tracesSuite measures what tracing costs: the stdio suite's hub with
// tracing off (the figures above) beside the same hub exporting every span
// with OTLP/HTTP to a collector stand-in in this process (it reads each
// export and answers 200), with a client that sends a traceparent in
// _meta on every call, in the same run, interleaved.
func tracesSuite(dir, hubBin, fixture string) {
	var spans, bytes atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		spans.Add(1)
		bytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	hubTarget := func(name, head string) target {
		cfg := filepath.Join(dir, "bench-traces-"+name+".yaml")
		check(writeHubConfig(cfg, "logLevel: warn\nlimits:\n  maxInFlight: 64\n"+head, fixture, 1, "-only", "echo,big"))
		return target{name: name, start: func() (*exec.Cmd, error) {
			return exec.Command(hubBin, "--config", cfg, "--data-dir", filepath.Join(dir, "data-"+name)), nil
		}}
	}
	off := hubTarget("off", "")
	on := hubTarget("on", "telemetry:\n  endpoint: http://"+ln.Addr().String()+"\n")
	const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	type agg struct{ p50c1, rps1, p50c32, rps32, cpu32, big []float64 }
	res := map[string]*agg{"off": {}, "on": {}}
	for r := 0; r < *reps; r++ {
		for _, t := range []target{off, on} {
			s, err := connect(t)
			check(err)
			a := res[t.name]
			runTraced(s, 1, 300, "echo", map[string]any{"msg": "hello"}, traceparent) // warm up
			c1 := runTraced(s, 1, *calls1, "echo", map[string]any{"msg": "hello"}, traceparent)
			a.p50c1 = append(a.p50c1, float64(c1.p50))
			a.rps1 = append(a.rps1, c1.rps)
			c32 := runTraced(s, 32, *calls2, "echo", map[string]any{"msg": "hello"}, traceparent)
			a.p50c32 = append(a.p50c32, float64(c32.p50))
			a.rps32 = append(a.rps32, c32.rps)
			a.cpu32 = append(a.cpu32, float64(c32.cpuPerCall))
			big := runTraced(s, 1, *nBig, "big", map[string]any{"kib": 100}, traceparent)
			a.big = append(a.big, float64(big.p50))
			check(s.stop())
		}
	}
	o, n := res["off"], res["on"]
	fmt.Printf("## tracing off and on: the stdio hub of the suite above, exporting every span (OTLP/HTTP) to a collector stand-in\n\n")
	fmt.Printf("The client sends a traceparent in _meta on every call. On: a server span and a client span per call, the hub's context spliced into the upstream's params._meta, spans batched and exported (%d exports, %.1f MB received).\n\n", spans.Load(), float64(bytes.Load())/1e6)
	fmt.Printf("| metric | tracing off | tracing on | on − off | on / off |\n|---|---|---|---|---|\n")
	row := func(name string, ov, nv float64, unit string) {
		switch unit {
		case "µs":
			fmt.Printf("| %s | %s µs | %s µs | %+.0f µs | %.2f× |\n", name, us(ov), us(nv), (nv-ov)/1e3, nv/ov)
		case "ms":
			fmt.Printf("| %s | %.2f ms | %.2f ms | %+.2f ms | %.2f× |\n", name, ov/1e6, nv/1e6, (nv-ov)/1e6, nv/ov)
		default:
			fmt.Printf("| %s | %.0f | %.0f | %+.0f | %.2f× |\n", name, ov, nv, nv-ov, nv/ov)
		}
	}
	row("echo p50, concurrency 1", median(o.p50c1), median(n.p50c1), "µs")
	row("calls/s, concurrency 1", median(o.rps1), median(n.rps1), "")
	row("echo p50, concurrency 32", median(o.p50c32), median(n.p50c32), "µs")
	row("calls/s, concurrency 32", median(o.rps32), median(n.rps32), "")
	row("hub CPU per call, concurrency 32", median(o.cpu32), median(n.cpu32), "µs")
	row("100 KiB result p50, concurrency 1", median(o.big), median(n.big), "ms")
	fmt.Println()
}

// runTraced is run with a traceparent in every call's _meta.
func runTraced(s *session, conc, n int, tool string, args map[string]any, traceparent string) runResult {
	r, err := tryRunOnMeta([]*mcp.ClientSession{s.cs}, s.cmd.Process.Pid, conc, n, tool, args, mcp.Meta{"traceparent": traceparent})
	check(err)
	return r
}
