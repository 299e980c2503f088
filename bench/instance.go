package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The instance suite measures what one per-session instance (scope
// session) costs: for the fixture and for @modelcontextprotocol/server-
// everything (installed by scripts/npm-deps.sh into .cache/npm), the time
// from spawn to its initialize answered and to its tools listed, its
// resident memory (VmRSS) at those points, and, through a hub serving HTTP
// with the server at scope session, what a new client session's first
// call costs (its instance starts) against its next one.

var instStarts = flag.Int("inst-starts", 10, "instance suite: starts of each server (medians over them)")

// instServer is one server the suite starts.
type instServer struct {
	label   string
	command string
	args    []string
}

// instRun is one start of a server, directly over stdio.
type instRun struct {
	initialized, listed time.Duration // spawn → initialize answered; → tools/list answered
	cpu                 time.Duration // CPU time the server used until initialize answered
	rssInit, rssListed  int64         // VmRSS in kB at those points
	tools               int
}

// hubRun is one client session of a hub whose server is session-scoped.
type hubRun struct {
	first, next time.Duration // the session's first call (its instance starts), its second
}

func instanceSuite(dir, hubBin, fixture string) {
	root, err := testbin.Root()
	check(err)
	everything := filepath.Join(root, ".cache", "npm", "node_modules", "@modelcontextprotocol", "server-everything")
	servers := []instServer{{label: "the test fixture (Go)", command: fixture}}
	if _, err := os.Stat(filepath.Join(everything, "dist", "index.js")); err == nil {
		servers = append(servers, instServer{
			label:   fmt.Sprintf("@modelcontextprotocol/server-everything %s (node %s)", pkgVersion(filepath.Dir(filepath.Dir(everything)), "@modelcontextprotocol/server-everything"), nodeVersion()),
			command: *nodeBin, args: []string{filepath.Join(everything, "dist", "index.js"), "stdio"},
		})
	} else {
		fmt.Fprintln(os.Stderr, "instance: server-everything not installed (scripts/npm-deps.sh); measuring the fixture only")
	}
	direct := make([][]instRun, len(servers))
	viaHub := make([][]hubRun, len(servers))
	hubs := make([]*sessionHub, len(servers))
	for i, s := range servers {
		h, err := startSessionHub(dir, hubBin, s, i)
		check(err)
		defer h.stop()
		hubs[i] = h
	}
	for r := range *instStarts {
		fmt.Fprintf(os.Stderr, "instance: repetition %d/%d\n", r+1, *instStarts)
		for i, s := range servers {
			run, err := startInstanceOnce(s)
			check(err)
			direct[i] = append(direct[i], run)
			hr, err := hubs[i].session()
			check(err)
			viaHub[i] = append(viaHub[i], hr)
		}
	}

	fmt.Printf("## instance: the cost of one per-session instance\n\n")
	fmt.Printf("%d starts per server; medians [min–max]. Direct: go-sdk's client spawns the server over stdio (mcp.CommandTransport), in the environment the hub gives its children; initialized = spawn → initialize answered, listed = → tools/list answered; VmRSS read from /proc right then; CPU = the server's user+system time until initialized (10 ms ticks), which the machine's load does not inflate. Through the hub (interleaved with the direct starts): mcp-hub serve --http with the server at scope session; a new client session's first tools/call starts its instance (spawn, initialize, list, call), its second goes to the running instance.\n\n", *instStarts)
	fmt.Printf("| server | tools | → initialized ms | CPU to initialized ms | → listed ms | VmRSS initialized MB | VmRSS listed MB | hub: first call of a session ms | hub: next call ms |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, s := range servers {
		ms := func(f func(instRun) time.Duration) string {
			var xs []float64
			for _, r := range direct[i] {
				xs = append(xs, float64(f(r)))
			}
			return msSpread(xs)
		}
		mb := func(f func(instRun) int64) string {
			var xs []float64
			for _, r := range direct[i] {
				xs = append(xs, float64(f(r)))
			}
			return mbSpread(xs)
		}
		hubMS := func(f func(hubRun) time.Duration) string {
			var xs []float64
			for _, r := range viaHub[i] {
				xs = append(xs, float64(f(r)))
			}
			return msSpread(xs)
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", s.label, direct[i][0].tools,
			ms(func(r instRun) time.Duration { return r.initialized }), ms(func(r instRun) time.Duration { return r.cpu }),
			ms(func(r instRun) time.Duration { return r.listed }),
			mb(func(r instRun) int64 { return r.rssInit }), mb(func(r instRun) int64 { return r.rssListed }),
			hubMS(func(r hubRun) time.Duration { return r.first }), hubMS(func(r hubRun) time.Duration { return r.next }))
	}
	fmt.Println()
}

// startInstanceOnce spawns s, times its initialize and tools/list, reads
// its memory, and stops it.
func startInstanceOnce(s instServer) (instRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := own(exec.Command(s.command, s.args...))
	cmd.Env = childEnv()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	t0 := time.Now()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		if cmd.Process != nil {
			err = errors.Join(err, reapTree(cmd.Process.Pid, descendants(cmd.Process.Pid), nil))
		}
		return instRun{}, fmt.Errorf("%s: %w", s.label, err)
	}
	var run instRun
	run.initialized = time.Since(t0)
	pid := cmd.Process.Pid
	run.rssInit, run.cpu = memKB(pid, "VmRSS"), cpuTime(pid)
	res, err := cs.ListTools(ctx, nil)
	run.listed = time.Since(t0)
	run.rssListed = memKB(pid, "VmRSS")
	sess := &session{cs: cs, cmd: cmd}
	if err != nil {
		return run, errors.Join(err, sess.stop())
	}
	run.tools = len(res.Tools)
	return run, sess.stop()
}

// sessionHub is a hub serving HTTP with one server at scope session.
type sessionHub struct {
	*httpServer
	label string
	hc    *http.Client
}

// startSessionHub starts a hub serving HTTP with s at scope session (in a
// data directory of its own, n) and waits until its catalog has s's echo
// tool, on a session that is then closed.
func startSessionHub(dir, hubBin string, s instServer, n int) (*sessionHub, error) {
	cmdJSON, _ := json.Marshal(s.command)
	argsJSON, _ := json.Marshal(append([]string{}, s.args...))
	cfg := filepath.Join(dir, fmt.Sprintf("bench-instance-%d.yaml", n))
	yaml := fmt.Sprintf("logLevel: info\nprotocolVersion: \"2025-11-25\"\nhttp:\n  token: %s\nmcpServers:\n  srv:\n    command: %s\n    args: %s\n    scope: session\n",
		benchToken, cmdJSON, argsJSON)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	cmd := own(exec.Command(hubBin, "serve", "--config", cfg, "--data-dir", filepath.Join(dir, fmt.Sprintf("data-instance-%d", n)), "--http", "127.0.0.1:0"))
	errp, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	u, err := startScanning(cmd, errp, streamableRE)
	if err != nil {
		return nil, err
	}
	h := &sessionHub{httpServer: &httpServer{cmd: cmd, url: u, tok: benchToken}, label: s.label, hc: httpClient(benchToken)}
	warm, err := connectHTTP(h.httpServer, "streamable", "echo", h.hc)
	if err != nil {
		h.stop()
		return nil, fmt.Errorf("%s behind the hub: %w", s.label, err)
	}
	warm.Close()
	return h, nil
}

// session opens a client session and times its first and second call to
// the server's echo tool, then closes it (its instance stops).
func (h *sessionHub) session() (hubRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: h.url, HTTPClient: h.hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return hubRun{}, err
	}
	defer cs.Close()
	echo := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}
	call := func() (time.Duration, error) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, echo)
		if err == nil && res.IsError {
			err = fmt.Errorf("echo: tool error %v", res.Content)
		}
		return time.Since(t0), err
	}
	var r hubRun
	if r.first, err = call(); err == nil {
		r.next, err = call()
	}
	if err != nil {
		return r, fmt.Errorf("%s behind the hub: %w", h.label, err)
	}
	return r, nil
}

// childEnv is the environment the hub gives a stdio upstream that declares
// none (upstream's inheritedEnv): the direct starts run with it, so they
// measure what an instance costs (node, for one, reads NODE_EXTRA_CA_CERTS
// at start when it is set).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TMPDIR", "TMP", "TEMP", "TZ", "TERM",
			"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME":
			env = append(env, kv)
		default:
			if strings.HasPrefix(k, "LC_") {
				env = append(env, kv)
			}
		}
	}
	return env
}

// nodeVersion is what node --version prints, or "?".
func nodeVersion() string {
	out, err := exec.Command(*nodeBin, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
