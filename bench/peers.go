package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The peers suite puts the same fixture upstream (a stdio child, tools echo
// and big) behind mcp-hub and behind the npm hubs and bridges a user would
// otherwise pick, over the transports each of them serves, and measures
// every one against a direct connection to the fixture on the same
// transport, in one run. The npm packages are pinned in
// testdata/npm-bench and installed into .cache/npm-bench by
// scripts/npm-deps.sh bench (make bench runs it).

const defaultPeers = "direct-stdio,hub-stdio,direct-http,hub-mcp,sg-stateful,mp-stream,mp-stream-noes,direct-sse,hub-sse,sg-sse,mp-sse,npm-mcp-hub"

var (
	peerKeys = flag.String("peers", defaultPeers, "peers suite: targets, in the order each repetition runs them (sg-stateless is also known, not run by default: ~9 ms per call)")
	peerN1   = flag.Int("pn1", 2000, "peers suite: calls at concurrency 1")
	peerN32  = flag.Int("pn32", 4000, "peers suite: calls at concurrency 32, on 1 session and again on 32 sessions")
	nodeBin  = flag.String("node", "node", "peers suite: the node binary that runs the npm peers")
)

// peerTarget is one way to reach the fixture's echo tool.
type peerTarget struct {
	key       string
	label     string // row label
	transport string // stdio, streamable or sse
	how       string // what runs, for the report
	tool      string // the echo tool's name as the target lists it
	multi     bool   // serves 32 concurrent sessions
	scale     int    // call counts are divided by this (very slow targets)
	baseline  string // key of the direct target on the same transport
	ours      string // key of mcp-hub on the same transport (peers only)
	stdio     *target
	start     func() (*httpServer, error)
}

// peerRun is one repetition's measurement of one target.
type peerRun struct {
	c1, c32, s32 runResult // concurrency 1; 32 on one session; 32 on 32 sessions
	has32s       bool
	mem          treeMem
	err          error
}

// peerEnv is what the npm peers need to run.
type peerEnv struct {
	dir, fixture, node, modules, shim string
}

func peersSuite(dir, hubBin, fixture string) {
	root, err := testbin.Root()
	check(err)
	env := peerEnv{dir: dir, fixture: fixture, node: *nodeBin, modules: filepath.Join(root, ".cache", "npm-bench", "node_modules")}
	if _, err := os.Stat(env.modules); err != nil {
		check(fmt.Errorf("peers suite: %s is missing: run scripts/npm-deps.sh bench (make bench does)", env.modules))
	}
	nodeVersion, err := exec.Command(env.node, "--version").Output()
	check(err)
	env.shim = filepath.Join(dir, "listen-127.0.0.1.cjs")
	check(os.WriteFile(env.shim, []byte(listenShim), 0o600))
	if real, err := filepath.EvalSymlinks(fixture); err == nil {
		env.fixture = real
	}

	all := peerTargets(dir, hubBin, env)
	var targets []*peerTarget
	for _, k := range strings.Split(*peerKeys, ",") {
		t, ok := all[strings.TrimSpace(k)]
		if !ok {
			check(fmt.Errorf("peers suite: unknown target %q", k))
		}
		targets = append(targets, t)
	}

	res := map[string][]peerRun{}
	for r := 0; r < *reps; r++ {
		for _, t := range targets {
			fmt.Fprintf(os.Stderr, "peers: repetition %d/%d, %s\n", r+1, *reps, t.key)
			pr := measurePeer(t, env)
			if pr.err != nil {
				fmt.Fprintf(os.Stderr, "peers: %s failed: %v\n", t.key, pr.err)
			}
			res[t.key] = append(res[t.key], pr)
		}
	}
	printPeers(targets, res, strings.TrimSpace(string(nodeVersion)), env)
}

// listenShim is preloaded (node -r) into the peers that have no option for
// the listening address (supergateway, npm mcp-hub listen on every
// interface): it pins every listen(port) to 127.0.0.1.
const listenShim = `// Preloaded by mcp-hub's bench: pins listen(port) to 127.0.0.1.
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  return listen.apply(this, args);
};
`

func peerTargets(dir, hubBin string, env peerEnv) map[string]*peerTarget {
	direct, hub := stdioTargets(dir, hubBin, env.fixture)
	fx := env.fixture + " -only echo,big"
	sg := filepath.Join(env.modules, "supergateway", "dist", "index.js")
	mp := filepath.Join(env.modules, "mcp-proxy", "dist", "bin", "mcp-proxy.mjs")
	nh := filepath.Join(env.modules, "mcp-hub", "dist", "cli.js")
	// owned makes the processes a stdio target spawns leaders of their own
	// process groups.
	owned := func(t target) *target {
		return &target{name: t.name, start: func() (*exec.Cmd, error) {
			c, err := t.start()
			if err == nil {
				own(c)
			}
			return c, err
		}}
	}
	ts := []*peerTarget{
		{key: "direct-stdio", label: "direct", transport: "stdio", how: "fixture over stdio", stdio: owned(direct)},
		{key: "hub-stdio", label: "**mcp-hub**", transport: "stdio", how: "mcp-hub --config hub.yaml (stdio front)", baseline: "direct-stdio", stdio: owned(hub)},
		{key: "direct-http", label: "direct", transport: "streamable", how: "fixture -transport http (go-sdk stateful streamable handler)", multi: true,
			start: func() (*httpServer, error) { return startDirectHTTP(env.fixture, "streamable", "-only", "echo,big") }},
		{key: "hub-mcp", label: "**mcp-hub**", transport: "streamable", how: "mcp-hub serve --http 127.0.0.1:0, /mcp, maxInFlight 64", multi: true, baseline: "direct-http",
			start: func() (*httpServer, error) {
				return startHubHTTP(dir, hubBin, env.fixture, "streamable", 1, "-only", "echo,big")
			}},
		{key: "sg-stateful", label: "supergateway", transport: "streamable", multi: true, baseline: "direct-http", ours: "hub-mcp",
			how: "--stdio FIXTURE --outputTransport streamableHttp --stateful --logLevel none",
			start: func() (*httpServer, error) {
				return startNodePeer(env, "sg-stateful", "/mcp", true, nil, sg, "--stdio", fx, "--outputTransport", "streamableHttp", "--stateful", "--logLevel", "none", "--port", "{port}")
			}},
		{key: "sg-stateless", label: "supergateway (stateless)", transport: "streamable", multi: true, scale: 10, baseline: "direct-http", ours: "hub-mcp",
			how: "--stdio FIXTURE --outputTransport streamableHttp --logLevel none (its default mode: one upstream per request; 1/10 of the calls)",
			start: func() (*httpServer, error) {
				return startNodePeer(env, "sg-stateless", "/mcp", true, nil, sg, "--stdio", fx, "--outputTransport", "streamableHttp", "--logLevel", "none", "--port", "{port}")
			}},
		{key: "mp-stream", label: "mcp-proxy", transport: "streamable", multi: true, baseline: "direct-http", ours: "hub-mcp",
			how: "--host 127.0.0.1 --server stream -- FIXTURE (defaults: event store on)",
			start: func() (*httpServer, error) {
				return startNodePeer(env, "mp-stream", "/mcp", false, nil, mp, "--host", "127.0.0.1", "--server", "stream", "--port", "{port}", "--", env.fixture, "-only", "echo,big")
			}},
		{key: "mp-stream-noes", label: "mcp-proxy --no-eventStore", transport: "streamable", multi: true, baseline: "direct-http", ours: "hub-mcp",
			how: "--host 127.0.0.1 --server stream --no-eventStore -- FIXTURE",
			start: func() (*httpServer, error) {
				return startNodePeer(env, "mp-stream-noes", "/mcp", false, nil, mp, "--host", "127.0.0.1", "--server", "stream", "--no-eventStore", "--port", "{port}", "--", env.fixture, "-only", "echo,big")
			}},
		{key: "direct-sse", label: "direct", transport: "sse", how: "fixture -transport sse (go-sdk SSE handler)", multi: true,
			start: func() (*httpServer, error) { return startDirectHTTP(env.fixture, "sse", "-only", "echo,big") }},
		{key: "hub-sse", label: "**mcp-hub**", transport: "sse", how: "mcp-hub serve --http 127.0.0.1:0, /sse, maxInFlight 64", multi: true, baseline: "direct-sse",
			start: func() (*httpServer, error) {
				return startHubHTTP(dir, hubBin, env.fixture, "sse", 1, "-only", "echo,big")
			}},
		{key: "sg-sse", label: "supergateway", transport: "sse", baseline: "direct-sse", ours: "hub-sse",
			how: "--stdio FIXTURE --outputTransport sse --logLevel none (1 session: it forwards every client's initialize to the one child)",
			start: func() (*httpServer, error) {
				return startNodePeer(env, "sg-sse", "/sse", true, nil, sg, "--stdio", fx, "--outputTransport", "sse", "--logLevel", "none", "--port", "{port}")
			}},
		{key: "mp-sse", label: "mcp-proxy", transport: "sse", multi: true, baseline: "direct-sse", ours: "hub-sse",
			how: "--host 127.0.0.1 --server sse -- FIXTURE",
			start: func() (*httpServer, error) {
				return startNodePeer(env, "mp-sse", "/sse", false, nil, mp, "--host", "127.0.0.1", "--server", "sse", "--port", "{port}", "--", env.fixture, "-only", "echo,big")
			}},
		{key: "npm-mcp-hub", label: "mcp-hub (npm)", transport: "sse", multi: true, tool: "fx__echo", baseline: "direct-sse", ours: "hub-sse",
			how:   "--port P --config cfg.json (serves legacy SSE at /mcp; tools prefixed fx__)",
			start: func() (*httpServer, error) { return startNpmMcpHub(env, nh) }},
	}
	m := map[string]*peerTarget{}
	for _, t := range ts {
		if t.tool == "" {
			t.tool = "echo"
		}
		if t.scale == 0 {
			t.scale = 1
		}
		m[t.key] = t
	}
	return m
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startNodePeer runs node [-r shim] script args, with "{port}" in args
// replaced by a free port, its output going to a log file in the bench's
// directory, and waits until it accepts TCP connections on 127.0.0.1. path
// is the MCP endpoint's path.
func startNodePeer(env peerEnv, name, path string, shim bool, extraEnv []string, script string, args ...string) (*httpServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	var argv []string
	if shim {
		argv = append(argv, "-r", env.shim)
	}
	argv = append(argv, script)
	for _, a := range args {
		argv = append(argv, strings.ReplaceAll(a, "{port}", fmt.Sprint(port)))
	}
	logPath := filepath.Join(env.dir, name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := own(exec.Command(env.node, argv...))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), extraEnv...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return &httpServer{cmd: cmd, url: "http://" + addr + path}, nil
		}
		if !testbin.Alive(cmd.Process.Pid) || time.Now().After(deadline) {
			_ = stopTree(cmd, syscall.SIGKILL)
			return nil, fmt.Errorf("%s did not listen on %s (log: %s):\n%s", name, addr, logPath, tail(logPath, 15))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startNpmMcpHub runs ravitemer's mcp-hub with the fixture as its one
// server, with HOME and the XDG directories in the bench's directory. Its
// marketplace cache is seeded with a fresh one-entry catalog, so that it
// does not fetch its registry from the internet at start.
func startNpmMcpHub(env peerEnv, cli string) (*httpServer, error) {
	base := filepath.Join(env.dir, "npm-mcp-hub")
	cache := filepath.Join(base, "data", "mcp-hub", "cache")
	for _, d := range []string{filepath.Join(base, "home"), cache, filepath.Join(base, "state"), filepath.Join(base, "config")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	registry, _ := json.Marshal(map[string]any{
		"registry":            map[string]any{"version": "bench", "generatedAt": 0, "totalServers": 1, "servers": []any{map[string]any{"id": "bench", "name": "bench"}}},
		"lastFetchedAt":       time.Now().UnixMilli(),
		"serverDocumentation": map[string]any{},
	})
	if err := os.WriteFile(filepath.Join(cache, "registry.json"), registry, 0o600); err != nil {
		return nil, err
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"fx": map[string]any{"command": env.fixture, "args": []string{"-only", "echo,big"}}}})
	cfgPath := filepath.Join(base, "cfg.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	extra := []string{"HOME=" + filepath.Join(base, "home"), "XDG_DATA_HOME=" + filepath.Join(base, "data"),
		"XDG_STATE_HOME=" + filepath.Join(base, "state"), "XDG_CONFIG_HOME=" + filepath.Join(base, "config")}
	srv, err := startNodePeer(env, "npm-mcp-hub", "/mcp", true, extra, cli, "--config", cfgPath, "--port", "{port}")
	if err != nil {
		return nil, err
	}
	// It listens before its MCP endpoint exists (GET /mcp answers 500
	// until then): wait for the state its health endpoint reports.
	health := strings.TrimSuffix(srv.url, "/mcp") + "/api/health"
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var h struct{ State string }
		if resp, err := http.Get(health); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
		}
		if h.State == "ready" {
			return srv, nil
		}
		if time.Now().After(deadline) {
			_ = stopTree(srv.cmd, syscall.SIGKILL)
			return nil, fmt.Errorf("npm mcp-hub not ready within 30s (state %q)", h.State)
		}
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// measurePeer starts t, connects (one session, or 32 if t serves them),
// makes the calls, reads the peak RSS of its process tree, and stops it.
func measurePeer(t *peerTarget, env peerEnv) (pr peerRun) {
	echo := map[string]any{"msg": "hello"}
	n1, n32 := max(*peerN1/t.scale, 100), max(*peerN32/t.scale, 320)
	var sessions []*mcp.ClientSession
	var root int
	var stop func() error
	if t.stdio != nil {
		s, err := connect(*t.stdio) // kills what it started if it fails
		if err != nil {
			return peerRun{err: err}
		}
		sessions, root = []*mcp.ClientSession{s.cs}, s.cmd.Process.Pid
		stop = s.stop
	} else {
		srv, err := t.start()
		if err != nil {
			return peerRun{err: err}
		}
		hc := httpClient(srv.tok)
		root = srv.cmd.Process.Pid
		stop = func() error {
			for _, cs := range sessions {
				cs.Close()
			}
			hc.CloseIdleConnections()
			return stopTree(srv.cmd, syscall.SIGINT)
		}
		want := 1
		if t.multi {
			want = 32
		}
		for range want {
			cs, err := connectHTTP(srv, t.transport, t.tool, hc)
			if err != nil {
				pr.err = fmt.Errorf("session %d: %w", len(sessions)+1, err)
				break
			}
			sessions = append(sessions, cs)
		}
	}
	defer func() {
		if err := stop(); err != nil {
			pr.err = errors.Join(pr.err, err)
		}
	}()
	if pr.err != nil {
		return pr
	}
	var err error
	if _, err = tryRunOn(sessions[:1], root, 1, 200, t.tool, echo); err != nil { // warm-up
		pr.err = err
		return pr
	}
	if pr.c1, err = tryRunOn(sessions[:1], root, 1, n1, t.tool, echo); err != nil {
		pr.err = err
		return pr
	}
	if pr.c32, err = tryRunOn(sessions[:1], root, 32, n32, t.tool, echo); err != nil {
		pr.err = err
		return pr
	}
	if len(sessions) == 32 {
		if pr.s32, err = tryRunOn(sessions, root, 32, n32, t.tool, echo); err != nil {
			pr.err = err
			return pr
		}
		pr.has32s = true
	}
	pr.mem = peakRSS(root, env.fixture)
	return pr
}

var transportNames = map[string]string{"stdio": "stdio", "streamable": "streamable HTTP", "sse": "SSE"}

// pkgVersion returns the version of an installed npm package.
func pkgVersion(modules, name string) string {
	var p struct{ Version string }
	b, err := os.ReadFile(filepath.Join(modules, name, "package.json"))
	if err != nil || json.Unmarshal(b, &p) != nil {
		return "?"
	}
	return p.Version
}

// peerMedian is the median of f over the repetitions that succeeded, or -1.
func peerMedian(rs []peerRun, f func(peerRun) float64) float64 {
	var xs []float64
	for _, r := range rs {
		if r.err == nil {
			xs = append(xs, f(r))
		}
	}
	if len(xs) == 0 {
		return -1
	}
	return median(xs)
}

// peerRatio is the median over repetitions of f(a)/f(b), taking only
// repetitions in which both succeeded, or -1.
func peerRatio(a, b []peerRun, f func(peerRun) float64) float64 {
	var xs []float64
	for i := range min(len(a), len(b)) {
		if a[i].err == nil && b[i].err == nil && f(b[i]) > 0 {
			xs = append(xs, f(a[i])/f(b[i]))
		}
	}
	if len(xs) == 0 {
		return -1
	}
	return median(xs)
}

// margin says how far ahead or behind mcp-hub is, given the ratio
// mcp-hub/peer of a metric where lower (latency, CPU, memory) or higher
// (calls/s) is better.
func margin(r float64, lowerBetter bool) string {
	switch {
	case r <= 0:
		return "–"
	case lowerBetter == (r <= 1):
		return fmt.Sprintf("ahead %.2f×", max(r, 1/r))
	default:
		return fmt.Sprintf("behind %.2f×", max(r, 1/r))
	}
}

func printPeers(targets []*peerTarget, res map[string][]peerRun, nodeVersion string, env peerEnv) {
	p50c1 := func(r peerRun) float64 { return float64(r.c1.p50) }
	p99c1 := func(r peerRun) float64 { return float64(r.c1.p99) }
	rps1 := func(r peerRun) float64 { return r.c1.rps }
	p50c32 := func(r peerRun) float64 { return float64(r.c32.p50) }
	p99c32 := func(r peerRun) float64 { return float64(r.c32.p99) }
	rps32 := func(r peerRun) float64 { return r.c32.rps }
	p50s32 := func(r peerRun) float64 { return float64(r.s32.p50) }
	p99s32 := func(r peerRun) float64 { return float64(r.s32.p99) }
	rpss32 := func(r peerRun) float64 { return r.s32.rps }
	cpu := func(r peerRun) float64 { return float64(r.c32.cpuPerCall) }
	proxyMB := func(r peerRun) float64 { return float64(r.mem.proxyKB) / 1024 }
	upMB := func(r peerRun) float64 { return float64(r.mem.upstreamKB) / 1024 }
	totalMB := func(r peerRun) float64 { return float64(r.mem.proxyKB+r.mem.upstreamKB) / 1024 }
	ups := func(r peerRun) float64 { return float64(r.mem.upstreams) }

	usCell := func(v float64) string {
		if v < 0 {
			return "–"
		}
		return us(v)
	}
	numCell := func(v float64) string {
		if v < 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f", v)
	}
	mbCell := func(v float64) string {
		if v <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f", v)
	}
	xCell := func(v float64) string {
		if v < 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", v)
	}

	fmt.Printf("## Peers: the fixture behind mcp-hub and behind npm hubs and bridges\n\n")
	fmt.Printf("node %s; supergateway %s, mcp-proxy %s, mcp-hub (npm) %s; %d repetitions; per target and repetition: %d calls at concurrency 1, %d at concurrency 32 on 1 session, %d on 32 sessions.\n\n",
		nodeVersion, pkgVersion(env.modules, "supergateway"), pkgVersion(env.modules, "mcp-proxy"), pkgVersion(env.modules, "mcp-hub"),
		*reps, *peerN1, *peerN32, *peerN32)
	fmt.Printf("| target | transport | c=1 p50 µs | c=1 p99 µs | c=1 calls/s | c=32 p50 µs | c=32 p99 µs | c=32 calls/s | 32 sessions p50 µs | 32 sessions p99 µs | 32 sessions calls/s | server CPU µs/call (c=32) | proxy peak RSS MB | upstream peak RSS MB |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var failures []string
	for _, t := range targets {
		rs := res[t.key]
		ok := 0
		for _, r := range rs {
			if r.err == nil {
				ok++
			} else {
				failures = append(failures, fmt.Sprintf("%s: %v", t.key, r.err))
			}
		}
		label := t.label
		if ok < len(rs) {
			label += fmt.Sprintf(" (%d/%d reps)", ok, len(rs))
		}
		if ok == 0 {
			fmt.Printf("| %s | %s | failed | | | | | | | | | | | |\n", label, transportNames[t.transport])
			continue
		}
		s32 := [3]string{"–", "–", "–"}
		if t.multi {
			s32 = [3]string{usCell(peerMedian(rs, p50s32)), usCell(peerMedian(rs, p99s32)), numCell(peerMedian(rs, rpss32))}
		}
		proxy, up := mbCell(peerMedian(rs, proxyMB)), mbCell(peerMedian(rs, upMB))
		if n := peerMedian(rs, func(r peerRun) float64 { return float64(r.mem.proxies) }); n > 1 {
			proxy += fmt.Sprintf(" (%.0f processes)", n)
		}
		if n := peerMedian(rs, ups); n > 1 {
			up += fmt.Sprintf(" (%.0f processes)", n)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, transportNames[t.transport],
			usCell(peerMedian(rs, p50c1)), usCell(peerMedian(rs, p99c1)), numCell(peerMedian(rs, rps1)),
			usCell(peerMedian(rs, p50c32)), usCell(peerMedian(rs, p99c32)), numCell(peerMedian(rs, rps32)),
			s32[0], s32[1], s32[2], usCell(peerMedian(rs, cpu)), proxy, up)
	}

	fmt.Printf("\nAgainst a direct connection on the same transport (median of the per-repetition ratios):\n\n")
	fmt.Printf("| target | transport | c=1 p50 − direct | c=1 p50 / direct | c=1 calls/s / direct | c=32 calls/s / direct | 32 sessions calls/s / direct |\n|---|---|---|---|---|---|---|\n")
	for _, t := range targets {
		b, ok := res[t.baseline]
		if t.baseline == "" || !ok {
			continue
		}
		a := res[t.key]
		var dp []float64
		for i := range min(len(a), len(b)) {
			if a[i].err == nil && b[i].err == nil {
				dp = append(dp, p50c1(a[i])-p50c1(b[i]))
			}
		}
		delta := "–"
		if len(dp) > 0 {
			delta = fmt.Sprintf("%+.0f µs", median(dp)/1e3)
		}
		s32 := "–"
		if t.multi {
			s32 = xCell(peerRatio(a, b, rpss32))
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", t.label, transportNames[t.transport], delta,
			xCell(peerRatio(a, b, p50c1)), xCell(peerRatio(a, b, rps1)), xCell(peerRatio(a, b, rps32)), s32)
	}

	fmt.Printf("\nmcp-hub against each peer on the same transport (median of the per-repetition ratios mcp-hub/peer; ahead = mcp-hub is better by that factor):\n\n")
	fmt.Printf("| peer | transport | c=1 p50 | c=1 p99 | c=1 calls/s | c=32 p50 | c=32 p99 | c=32 calls/s | 32 sessions calls/s | CPU per call (c=32) | proxy peak RSS | proxy + upstream peak RSS |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, t := range targets {
		o, ok := res[t.ours]
		if t.ours == "" || !ok {
			continue
		}
		a := res[t.key]
		s32 := "–"
		if t.multi {
			s32 = margin(peerRatio(o, a, rpss32), false)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.label, transportNames[t.transport],
			margin(peerRatio(o, a, p50c1), true), margin(peerRatio(o, a, p99c1), true), margin(peerRatio(o, a, rps1), false),
			margin(peerRatio(o, a, p50c32), true), margin(peerRatio(o, a, p99c32), true), margin(peerRatio(o, a, rps32), false),
			s32, margin(peerRatio(o, a, cpu), true), margin(peerRatio(o, a, proxyMB), true), margin(peerRatio(o, a, totalMB), true))
	}
	fmt.Println()
	fmt.Printf("Targets, as run (FIXTURE = the fixture binary -only echo,big, spawned by the proxy over stdio):\n\n")
	for _, t := range targets {
		fmt.Printf("- %s (%s, `%s`): %s\n", t.label, transportNames[t.transport], t.key, t.how)
	}
	fmt.Println()
	if len(failures) > 0 {
		fmt.Printf("Failed repetitions:\n\n")
		for _, f := range failures {
			fmt.Printf("- %s\n", strings.ReplaceAll(f, "\n", " "))
		}
		fmt.Println()
	}
}
