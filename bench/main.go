// Command bench measures mcp-hub against a direct connection to the same
// upstream, in one run, and prints markdown tables with the ratios.
//
//	go run ./bench [-reps 3] [-suite stdio,traces,http,remote,catalog,startup,list,rss,soak,peers,instance,code]
//
// Every figure is a median over interleaved repetitions (direct, hub,
// direct, hub, …), so background load hits both sides alike. Client, hub and
// upstream share the machine's cores: concurrency-1 latency is the clean
// per-hop figure, concurrency-32 throughput reflects total CPU per call.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	reps   = flag.Int("reps", 3, "interleaved repetitions per measurement")
	suites = flag.String("suite", "stdio,traces,http,remote,catalog,startup,list,rss,soak,code", "comma-separated suites: stdio, traces, http, remote, catalog, startup, list, rss, soak, peers, instance, code")
	calls1 = flag.Int("n1", 3000, "calls at concurrency 1")
	calls2 = flag.Int("n32", 20000, "calls at concurrency 32")
	nBig   = flag.Int("nbig", 300, "100 KiB calls")
	pump   = flag.Bool("pump", false, "run as a byte pump between stdio and the command in the arguments (the stdio suite's floor)")

	relayIDs  = flag.Bool("relay-ids", false, "run as an id-rewriting JSON-RPC relay between stdio and the command in the arguments (a floor)")
	relayHTTP = flag.String("relay-http", "", "run as a reverse proxy to this streamable HTTP endpoint (the remote suite's HTTP floor)")
	hubPath   = flag.String("hub", "", "measure this mcp-hub binary instead of building ./cmd/mcp-hub (e.g. a baseline built from another commit)")
	bridgeTo  = flag.String("bridge", "", "run as a stdio server that POSTs each message to this streamable HTTP endpoint (the remote suite's stdio floor)")
)

func main() {
	flag.Parse()
	switch {
	case *pump:
		os.Exit(pumpMain(flag.Args()))
	case *relayIDs:
		os.Exit(relayIDsMain(flag.Args()))
	case *relayHTTP != "":
		os.Exit(relayHTTPMain(*relayHTTP))
	case *bridgeTo != "":
		os.Exit(bridgeMain(*bridgeTo))
	}
	dir, err := os.MkdirTemp("", "mcp-hub-bench-")
	check(err)
	defer os.RemoveAll(dir)
	hubBin := *hubPath
	if hubBin == "" {
		hubBin, err = testbin.Build(dir, "./cmd/mcp-hub")
		check(err)
	}
	fixture, err := testbin.Build(dir, "./testdata/fixture")
	check(err)
	fmt.Printf("# mcp-hub benchmarks\n\n%s, %d CPUs, %s, %d repetitions, %s\n\n", runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(),
		cpuModel(), *reps, time.Now().UTC().Format("2006-01-02"))
	for _, s := range strings.Split(*suites, ",") {
		switch strings.TrimSpace(s) {
		case "stdio":
			stdioSuite(dir, hubBin, fixture)
		case "traces":
			tracesSuite(dir, hubBin, fixture)
		case "http":
			httpSuite(dir, hubBin, fixture)
		case "remote":
			remoteSuite(dir, hubBin, fixture)
		case "catalog":
			catalogSuite()
		case "startup":
			startupSuite(dir, hubBin, fixture)
		case "list":
			listSuite(dir, hubBin, fixture)
		case "rss":
			rssSuite(dir, hubBin, fixture)
		case "soak":
			soakSuite(dir, hubBin, fixture)
		case "peers":
			peersSuite(dir, hubBin, fixture)
		case "instance":
			instanceSuite(dir, hubBin, fixture)
		case "code":
			codeSuite(dir, hubBin, fixture)
		default:
			fmt.Fprintf(os.Stderr, "unknown suite %q\n", s)
			os.Exit(2)
		}
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if _, v, ok := strings.Cut(l, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown CPU"
}

// target is one way to reach the fixture: directly or through the hub.
type target struct {
	name  string
	start func() (*exec.Cmd, error) // the process the client spawns over stdio
}

// session is a connected client plus the process it spawned.
type session struct {
	cs  *mcp.ClientSession
	cmd *exec.Cmd
}

// dial spawns t's process and connects a go-sdk client session to it over
// its stdio. If the session cannot be set up, the process is killed.
func dial(ctx context.Context, t target) (*session, error) {
	cmd, err := t.start()
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		if cmd.Process != nil {
			err = errors.Join(err, reapTree(cmd.Process.Pid, descendants(cmd.Process.Pid), nil))
		}
		return nil, err
	}
	return &session{cs: cs, cmd: cmd}, nil
}

// connect dials t and waits until its echo tool is callable (the hub
// connects its upstreams in the background).
func connect(t target) (*session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := dial(ctx, t)
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hello"}}); err == nil {
			return s, nil
		} else if i > 200 {
			return nil, errors.Join(err, s.stop())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *session) close() { s.cs.Close() }

// stop closes the session (the process sees its stdin close; go-sdk sends
// SIGTERM after 5 s), then kills whatever is left of its process tree and
// reports survivors.
func (s *session) stop() error {
	root := s.cmd.Process.Pid
	kids := descendants(root)
	s.close()
	return reapTree(root, kids, nil)
}

// cpuTime returns the user+system CPU time a process has used.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+2:])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// hubChildPID returns the pid of the upstream the hub spawned, or 0.
func childPIDs(pid int) []int { return testbin.Children(pid) }

type runResult struct {
	p50, p99   time.Duration
	rps        float64
	cpuPerCall time.Duration // of the spawned process (direct: upstream; hub: the hub alone)
}

// run makes n calls of tool with args from conc goroutines on one session.
func run(s *session, conc, n int, tool string, args map[string]any) runResult {
	return runOn([]*mcp.ClientSession{s.cs}, s.cmd.Process.Pid, conc, n, tool, args)
}

// runOn makes n calls of tool with args from conc goroutines, goroutine i
// on sessions[i%len(sessions)], and measures the CPU process pid used. A
// failed call ends the bench.
func runOn(sessions []*mcp.ClientSession, pid, conc, n int, tool string, args map[string]any) runResult {
	r, err := tryRunOn(sessions, pid, conc, n, tool, args)
	check(err)
	return r
}

// tryRunOn is runOn that returns the first failed call (and stops the
// others) instead of ending the bench. The whole run has a deadline, so a
// peer that stops answering cannot hang the bench.
func tryRunOn(sessions []*mcp.ClientSession, pid, conc, n int, tool string, args map[string]any) (runResult, error) {
	return tryRunOnMeta(sessions, pid, conc, n, tool, args, nil)
}

// tryRunOnMeta is tryRunOn with _meta in every call (nil: none).
func tryRunOnMeta(sessions []*mcp.ClientSession, pid, conc, n int, tool string, args map[string]any, meta mcp.Meta) (runResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lat := make([]time.Duration, n)
	var failOnce sync.Once
	var failed error
	cpu0 := cpuTime(pid)
	start := time.Now()
	spread(ctx, n, conc, func(g, i int) bool {
		t0 := time.Now()
		res, err := sessions[g%len(sessions)].CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
		lat[i] = time.Since(t0)
		if err == nil && res.IsError {
			err = fmt.Errorf("isError result %v", res.Content)
		}
		if err != nil {
			failOnce.Do(func() {
				failed = fmt.Errorf("call %d of %s failed: %w", i, tool, err)
				cancel()
			})
			return false
		}
		return true
	})
	if failed != nil {
		return runResult{}, failed
	}
	elapsed := time.Since(start)
	cpu := cpuTime(pid) - cpu0
	slices.Sort(lat)
	return runResult{
		p50:        lat[n/2],
		p99:        lat[n*99/100],
		rps:        float64(n) / elapsed.Seconds(),
		cpuPerCall: cpu / time.Duration(n),
	}, nil
}

// spread runs do(g, i) for i = 0…n-1 from conc goroutines (g is the
// goroutine's number), each taking the next i when its last do returns. A
// goroutine stops when do returns false or ctx is done; spread returns when
// every goroutine has stopped.
func spread(ctx context.Context, n, conc int, do func(g, i int) bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil || !do(g, i) {
					return
				}
			}
		})
	}
	wg.Wait()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d float64) string { return fmt.Sprintf("%.0f", d/1e3) }

// benchHead is the start of every benchmarked hub's config: results pass
// whole (the default security.maxToolOutputLength of 50,000 characters
// would cut the 100 KiB results short, and measure the cut instead), and
// the hub speaks the session era to its upstreams, as the direct clients
// it is compared with do, so a ratio measures the hop and not a protocol
// revision (hub/'s benchmarks measure the stateless era's translation).
const benchHead = "security:\n  maxToolOutputLength: 0\nprotocolVersion: \"2025-11-25\"\n"

// writeHubConfig writes a hub config file: benchHead and head (YAML lines),
// then n stdio upstreams running the fixture with args, named fx (n = 1) or
// up00, up01, …
func writeHubConfig(path, head, fixture string, n int, args ...string) error {
	var b strings.Builder
	b.WriteString(benchHead)
	b.WriteString(head)
	b.WriteString("mcpServers:\n")
	cmd, _ := json.Marshal(fixture) // JSON strings and arrays are YAML
	argv, _ := json.Marshal(append([]string{}, args...))
	for i := range n {
		fmt.Fprintf(&b, "  %s:\n    command: %s\n    args: %s\n", upstreamName(i, n), cmd, argv)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// upstreamName is the name writeHubConfig gives upstream i of n.
func upstreamName(i, n int) string {
	if n == 1 {
		return "fx"
	}
	return fmt.Sprintf("up%02d", i)
}

// stdioTargets returns the fixture (tools echo and big) spawned directly
// over stdio, and the hub spawned over stdio with the fixture as its stdio
// upstream.
func stdioTargets(dir, hubBin, fixture string) (direct, hub target) {
	cfg := filepath.Join(dir, "bench-hub.yaml")
	check(writeHubConfig(cfg, "logLevel: warn\nlimits:\n  maxInFlight: 64\n", fixture, 1, "-only", "echo,big"))
	direct = target{name: "direct", start: func() (*exec.Cmd, error) {
		return exec.Command(fixture, "-only", "echo,big"), nil
	}}
	hub = target{name: "hub", start: func() (*exec.Cmd, error) {
		args := []string{"--config", cfg, "--data-dir", filepath.Join(dir, "data")}
		if *hubProf != "" {
			args = append(args, "--cpuprofile", *hubProf)
		}
		return exec.Command(hubBin, args...), nil
	}}
	return direct, hub
}

func stdioSuite(dir, hubBin, fixture string) {
	direct, hub := stdioTargets(dir, hubBin, fixture)
	self, err := os.Executable()
	check(err)
	floor := target{name: "pump", start: func() (*exec.Cmd, error) {
		return exec.Command(self, "-pump", fixture, "-only", "echo,big"), nil
	}}
	relay := target{name: "relay", start: func() (*exec.Cmd, error) {
		return exec.Command(self, "-relay-ids", fixture, "-only", "echo,big"), nil
	}}
	echo := map[string]any{"msg": "hello"}
	type agg struct{ p50c1, p99c1, rps1, p50c32, p99c32, rps32, cpu32, big []float64 }
	res := map[string]*agg{"direct": {}, "pump": {}, "relay": {}, "hub": {}}
	var upstreamCPU []float64
	for r := 0; r < *reps; r++ {
		for _, t := range []target{direct, floor, relay, hub} {
			s, err := connect(t)
			check(err)
			run(s, 1, 300, "echo", echo) // warm up
			a := res[t.name]
			c1 := run(s, 1, *calls1, "echo", echo)
			a.p50c1 = append(a.p50c1, float64(c1.p50))
			a.p99c1 = append(a.p99c1, float64(c1.p99))
			a.rps1 = append(a.rps1, c1.rps)
			var up0 time.Duration
			kids := childPIDs(s.cmd.Process.Pid)
			for _, k := range kids {
				up0 += cpuTime(k)
			}
			c32 := run(s, 32, *calls2, "echo", echo)
			a.p50c32 = append(a.p50c32, float64(c32.p50))
			a.p99c32 = append(a.p99c32, float64(c32.p99))
			a.rps32 = append(a.rps32, c32.rps)
			a.cpu32 = append(a.cpu32, float64(c32.cpuPerCall))
			if t.name == "hub" {
				var up1 time.Duration
				for _, k := range kids {
					up1 += cpuTime(k)
				}
				upstreamCPU = append(upstreamCPU, float64((up1-up0)/time.Duration(*calls2)))
			}
			big := run(s, 1, *nBig, "big", map[string]any{"kib": 100})
			a.big = append(a.big, float64(big.p50))
			check(s.stop())
		}
	}
	d, p, rl, h := res["direct"], res["pump"], res["relay"], res["hub"]
	fmt.Printf("## tools/call over stdio: client → mcp-hub → upstream vs client → upstream\n\n")
	fmt.Printf("The floors of one extra process hop, measured in the same run: \"byte pump\" only copies bytes between its stdio and the upstream's; \"id relay\" also does what any multiplexing proxy must per message: parse the envelope, give the request an id of its own and splice the client's id back into the response.\n\n")
	fmt.Printf("| metric | direct | byte pump | id relay | via hub | hub − direct | hub / direct | hub / id relay | target |\n|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, dv, pv, rv, hv float64, unit string, target string) {
		if unit == "µs" {
			fmt.Printf("| %s | %s µs | %s µs | %s µs | %s µs | %+.0f µs | %.2f× | %.2f× | %s |\n", name, us(dv), us(pv), us(rv), us(hv), (hv-dv)/1e3, hv/dv, hv/rv, target)
		} else {
			fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %+.0f | %.2f× | %.2f× | %s |\n", name, dv, pv, rv, hv, hv-dv, hv/dv, hv/rv, target)
		}
	}
	row4 := func(name, unit, target string, f func(*agg) []float64) {
		row(name, median(f(d)), median(f(p)), median(f(rl)), median(f(h)), unit, target)
	}
	row4("echo p50, concurrency 1", "µs", "≤ 1.05× id relay", func(a *agg) []float64 { return a.p50c1 })
	row4("echo p99, concurrency 1", "µs", "", func(a *agg) []float64 { return a.p99c1 })
	row4("calls/s, concurrency 1", "", "", func(a *agg) []float64 { return a.rps1 })
	row4("echo p50, concurrency 32", "µs", "", func(a *agg) []float64 { return a.p50c32 })
	row4("echo p99, concurrency 32", "µs", "", func(a *agg) []float64 { return a.p99c32 })
	row4("calls/s, concurrency 32", "", "≥ 0.79× direct", func(a *agg) []float64 { return a.rps32 })
	dv, pv, rv, hv := median(d.big), median(p.big), median(rl.big), median(h.big)
	fmt.Printf("| 100 KiB result p50, concurrency 1 | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %+.2f ms | %.2f× | %.2f× | ≤ +0.3 ms |\n",
		dv/1e6, pv/1e6, rv/1e6, hv/1e6, (hv-dv)/1e6, hv/dv, hv/rv)
	fmt.Printf("\nCPU per call at concurrency 32: hub process %s µs (target ≤ 60 µs), id relay %s µs, byte pump %s µs (upstream behind the hub %s µs; upstream alone, direct, %s µs).\n\n",
		us(median(h.cpu32)), us(median(rl.cpu32)), us(median(p.cpu32)), us(median(upstreamCPU)), us(median(d.cpu32)))
}

// pumpMain runs argv as a child and copies bytes between this process's
// stdio and the child's until the child exits; it returns the exit status.
func pumpMain(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "bench -pump: no command")
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err == nil {
		var out io.ReadCloser
		if out, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				go func() { _, _ = io.Copy(in, os.Stdin); in.Close() }() // ends at our stdin's EOF
				_, _ = io.Copy(os.Stdout, out)
				err = cmd.Wait()
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench -pump:", err)
		return 1
	}
	return 0
}

func catalogSuite() {
	const servers, tools = 100, 100
	var srcs []catalog.Source
	for s := range servers {
		src := catalog.Source{Server: fmt.Sprintf("server%03d", s)}
		for i := range tools {
			raw, _ := json.Marshal(map[string]any{
				"name":        fmt.Sprintf("tool_%03d", (i*7+s)%150),
				"description": "A tool that does something useful with its arguments, described at a typical length.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}, "required": []string{"path"}},
			})
			it, err := catalog.ParseTool(raw)
			check(err)
			src.Tools = append(src.Tools, it)
		}
		srcs = append(srcs, src)
	}
	fmt.Printf("## catalog merge: %d upstreams × %d tools\n\n", servers, tools)
	fmt.Printf("catalog.Build merges; the tools/list bytes are rendered on the first Catalog.ToolsResult (the hub does that right after a rebuild, off the request path) and served as they are after that.\n\n")
	fmt.Printf("| policy | Build median | Build min | first ToolsResult median | first ToolsResult min | Build + first ToolsResult median | later ToolsResult | tools/list bytes | target (Build + render) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, p := range []catalog.Policy{catalog.PolicyMerge, catalog.PolicyPrefix} {
		var build, render, total, again []float64
		var size int
		for range 50 {
			t0 := time.Now()
			c := catalog.Build(srcs, &catalog.Options{Policy: p})
			t1 := time.Now()
			size = len(c.ToolsResult())
			t2 := time.Now()
			c.ToolsResult()
			again = append(again, float64(time.Since(t2)))
			build = append(build, float64(t1.Sub(t0)))
			render = append(render, float64(t2.Sub(t1)))
			total = append(total, float64(t2.Sub(t0)))
		}
		fmt.Printf("| %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.0f ns | %d | ≤ 2 ms |\n", p,
			median(build)/1e6, slices.Min(build)/1e6, median(render)/1e6, slices.Min(render)/1e6, median(total)/1e6, median(again), size)
	}
	fmt.Println()
}
