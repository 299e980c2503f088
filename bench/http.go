package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchToken is the bearer token of the benchmarked hub.
const benchToken = "bench-token-0123456789abcdef"

var (
	httpTransports = flag.String("http", "streamable,sse", "http suite: the hub's HTTP transports to measure")
	hubProf        = flag.String("hubprof", "", "stdio, http, remote and soak suites: write the hub's CPU profile to this file (the last run's)")
)

// httpServer is a process serving MCP over HTTP: the fixture itself
// (direct) or the hub with the fixture as its stdio upstream.
type httpServer struct {
	cmd *exec.Cmd
	url string // endpoint: …/mcp or …/sse
	tok string // bearer token, "" for none
}

// stop interrupts the server, then kills whatever is left of its process
// tree; a process that survives even that is reported.
func (s *httpServer) stop() {
	if err := stopTree(s.cmd, syscall.SIGINT); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
}

var (
	listeningRE  = regexp.MustCompile(`^LISTENING (\S+)`)
	streamableRE = regexp.MustCompile(`streamable=(\S+)`)
	sseRE        = regexp.MustCompile(` sse=(\S+)`)
)

// startScanning starts cmd and returns the first submatch of re in the
// lines of r (the command's stdout or stderr), then keeps draining r.
func startScanning(cmd *exec.Cmd, r io.Reader, re *regexp.Regexp) (string, error) {
	if err := cmd.Start(); err != nil {
		return "", err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			_ = stopTree(cmd, syscall.SIGKILL)
			return "", errors.New("the process exited before it listened")
		}
		return u, nil
	case <-time.After(30 * time.Second):
		_ = stopTree(cmd, syscall.SIGKILL)
		return "", errors.New("no listening address within 30s")
	}
}

// startDirectHTTP starts the fixture serving transport ("streamable" or
// "sse") itself, with fxArgs.
func startDirectHTTP(fixture, transport string, fxArgs ...string) (*httpServer, error) {
	ft := "http"
	if transport == "sse" {
		ft = "sse"
	}
	return startListening(own(exec.Command(fixture, append([]string{"-transport", ft, "-addr", "127.0.0.1:0"}, fxArgs...)...)), false)
}

// startListening starts cmd, a process that prints "LISTENING <url>" on its
// stdout (or stderr) once it serves.
func startListening(cmd *exec.Cmd, stderr bool) (*httpServer, error) {
	out, err := cmd.StdoutPipe()
	if stderr {
		out, err = cmd.StderrPipe()
	}
	if err != nil {
		return nil, err
	}
	u, err := startScanning(cmd, out, listeningRE)
	if err != nil {
		return nil, err
	}
	return &httpServer{cmd: cmd, url: u}, nil
}

// hubHTTPHead is the head of the config of a hub serving HTTP. Its
// in-flight cap is raised above 32 so the 32-session run measures the hub's
// own cost, not its queueing policy (the default cap of 10 per upstream
// protects real servers).
const hubHTTPHead = "logLevel: info\nlimits:\n  maxInFlight: 64\nhttp:\n  token: " + benchToken + "\n"

// startHubHTTP starts the hub serving HTTP with n fixtures (run with fxArgs)
// as its stdio upstreams (see writeHubConfig).
func startHubHTTP(dir, hubBin, fixture, transport string, n int, fxArgs ...string) (*httpServer, error) {
	cfg := filepath.Join(dir, "bench-http.yaml")
	if err := writeHubConfig(cfg, hubHTTPHead, fixture, n, fxArgs...); err != nil {
		return nil, err
	}
	return startHubHTTPConfig(dir, hubBin, cfg, transport)
}

// startHubHTTPConfig starts the hub with config file cfg serving HTTP, and
// returns its endpoint for transport.
func startHubHTTPConfig(dir, hubBin, cfg, transport string) (*httpServer, error) {
	args := []string{"serve", "--config", cfg, "--data-dir", filepath.Join(dir, "data-http"), "--http", "127.0.0.1:0"}
	if *hubProf != "" {
		args = append(args, "--cpuprofile", *hubProf)
	}
	cmd := own(exec.Command(hubBin, args...))
	errp, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	re := streamableRE
	if transport == "sse" {
		re = sseRE
	}
	u, err := startScanning(cmd, errp, re)
	if err != nil {
		return nil, err
	}
	return &httpServer{cmd: cmd, url: u, tok: benchToken}, nil
}

type tokenTransport struct {
	tok  string
	base http.RoundTripper
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.tok != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.tok)
	}
	return t.base.RoundTrip(r)
}

// httpClient keeps enough idle connections for 32 sessions, so neither side
// pays for new TCP connections mid-run.
func httpClient(tok string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	return &http.Client{Transport: tokenTransport{tok, tr}}
}

// connectHTTP opens a go-sdk client session to s and waits until the echo
// tool, named tool by s, answers.
func connectHTTP(s *httpServer, transport, tool string, hc *http.Client) (*mcp.ClientSession, error) {
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: hc}
	if transport == "sse" {
		tr = &mcp.SSEClientTransport{Endpoint: s.url, HTTPClient: hc}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	// The SSE transport keeps its stream on this context: it lives as long
	// as the session. So the 30 s limit on connecting is a timer.
	type connected struct {
		cs  *mcp.ClientSession
		err error
	}
	ch := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		ch <- connected{cs, err}
	}()
	var cs *mcp.ClientSession
	select {
	case c := <-ch:
		if c.err != nil {
			return nil, c.err
		}
		cs = c.cs
	case <-time.After(30 * time.Second):
		go func() {
			if c := <-ch; c.cs != nil {
				c.cs.Close()
			}
		}()
		return nil, fmt.Errorf("connecting to %s: no session within 30s", s.url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; ; i++ {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"msg": "hello"}}); err == nil {
			return cs, nil
		} else if i > 300 {
			cs.Close()
			return nil, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func httpSuite(dir, hubBin, fixture string) {
	echo := map[string]any{"msg": "hello"}
	for _, transport := range strings.Split(*httpTransports, ",") {
		type agg struct{ p50c1, p99c1, rps1, rps1x32, cpu1x32, p50s32, rps32, cpu32 []float64 }
		res := map[string]*agg{"direct": {}, "hub": {}}
		for r := 0; r < *reps; r++ {
			for _, side := range []string{"direct", "hub"} {
				var srv *httpServer
				var err error
				if side == "direct" {
					srv, err = startDirectHTTP(fixture, transport, "-only", "echo")
				} else {
					srv, err = startHubHTTP(dir, hubBin, fixture, transport, 1, "-only", "echo")
				}
				check(err)
				hc := httpClient(srv.tok)
				sessions := make([]*mcp.ClientSession, 32)
				for i := range sessions {
					sessions[i], err = connectHTTP(srv, transport, "echo", hc)
					check(err)
				}
				pid := srv.cmd.Process.Pid
				runOn(sessions[:1], pid, 1, 300, "echo", echo) // warm up
				a := res[side]
				c1 := runOn(sessions[:1], pid, 1, *calls1, "echo", echo)
				a.p50c1 = append(a.p50c1, float64(c1.p50))
				a.p99c1 = append(a.p99c1, float64(c1.p99))
				a.rps1 = append(a.rps1, c1.rps)
				one := runOn(sessions[:1], pid, 32, *calls2/2, "echo", echo)
				a.rps1x32 = append(a.rps1x32, one.rps)
				a.cpu1x32 = append(a.cpu1x32, float64(one.cpuPerCall))
				s32 := runOn(sessions, pid, 32, *calls2/2, "echo", echo)
				a.p50s32 = append(a.p50s32, float64(s32.p50))
				a.rps32 = append(a.rps32, s32.rps)
				a.cpu32 = append(a.cpu32, float64(s32.cpuPerCall))
				for _, cs := range sessions {
					cs.Close()
				}
				hc.CloseIdleConnections()
				srv.stop()
			}
		}
		d, h := res["direct"], res["hub"]
		path := map[string]string{"streamable": "/mcp (streamable HTTP)", "sse": "/sse (legacy SSE)"}[transport]
		fmt.Printf("## tools/call over HTTP %s: client → mcp-hub → stdio upstream vs client → upstream serving HTTP\n\n", path)
		fmt.Printf("| metric | direct | via hub | hub − direct | hub / direct | target |\n|---|---|---|---|---|---|\n")
		fmt.Printf("| echo p50, 1 session | %s µs | %s µs | %+.0f µs | %.2f× | ≤ +120 µs |\n",
			us(median(d.p50c1)), us(median(h.p50c1)), (median(h.p50c1)-median(d.p50c1))/1e3, median(h.p50c1)/median(d.p50c1))
		fmt.Printf("| echo p99, 1 session | %s µs | %s µs | %+.0f µs | %.2f× | |\n",
			us(median(d.p99c1)), us(median(h.p99c1)), (median(h.p99c1)-median(d.p99c1))/1e3, median(h.p99c1)/median(d.p99c1))
		fmt.Printf("| calls/s, 1 session | %.0f | %.0f | %+.0f | %.2f× | |\n",
			median(d.rps1), median(h.rps1), median(h.rps1)-median(d.rps1), median(h.rps1)/median(d.rps1))
		fmt.Printf("| calls/s, 1 session, 32 in flight | %.0f | %.0f | %+.0f | %.2f× | ≥ 1.0× |\n",
			median(d.rps1x32), median(h.rps1x32), median(h.rps1x32)-median(d.rps1x32), median(h.rps1x32)/median(d.rps1x32))
		fmt.Printf("| echo p50, 32 sessions | %s µs | %s µs | %+.0f µs | %.2f× | |\n",
			us(median(d.p50s32)), us(median(h.p50s32)), (median(h.p50s32)-median(d.p50s32))/1e3, median(h.p50s32)/median(d.p50s32))
		fmt.Printf("| calls/s, 32 sessions | %.0f | %.0f | %+.0f | %.2f× | ≥ 1.2× |\n",
			median(d.rps32), median(h.rps32), median(h.rps32)-median(d.rps32), median(h.rps32)/median(d.rps32))
		fmt.Printf("\nCPU per call with 32 sessions: hub process %s µs (target ≤ 100 µs); the upstream serving HTTP itself, direct, %s µs. With 1 session and 32 in flight: hub %s µs, upstream direct %s µs.\n\n",
			us(median(h.cpu32)), us(median(d.cpu32)), us(median(h.cpu1x32)), us(median(d.cpu1x32)))
	}
}
