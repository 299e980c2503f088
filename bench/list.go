package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/framing"
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// The list suite measures tools/list of a catalog of 1,000+ tools: the hub's
// CPU per list (it serves pre-encoded bytes) and the latency a client sees.

var (
	nLists    = flag.Int("lists", 2000, "list suite: tools/list requests per repetition on the raw client")
	nSDKLists = flag.Int("sdklists", 50, "list suite: tools/list requests per repetition on the go-sdk client")
)

const (
	listUpstreams = 10
	listDummies   = 100 // -dummy of each upstream, besides echo
)

// rawClient speaks newline-delimited JSON-RPC over a process's stdio with
// no SDK: the cheapest client there is, so that the machine's CPU goes to
// the server being measured.
type rawClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *framing.Reader
	id  int64
}

// startRaw starts cmd, which must lead its own process group (own), and
// initializes an MCP session with it.
func startRaw(cmd *exec.Cmd) (*rawClient, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &rawClient{cmd: cmd, in: in, out: framing.NewReader(out, 64<<20)}
	_, err = c.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	if err == nil {
		_, err = in.Write(append(wire.AppendNotification(nil, "notifications/initialized", nil), '\n'))
	}
	if err != nil {
		return nil, errors.Join(err, c.stop())
	}
	return c, nil
}

// request sends a request and returns its result, skipping the messages
// that come before its response. A process that does not answer within
// 30 s is killed, which ends the wait.
func (c *rawClient) request(method, params string) ([]byte, error) {
	c.id++
	id := strconv.AppendInt(nil, c.id, 10)
	kill := time.AfterFunc(30*time.Second, func() { _ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) })
	defer kill.Stop()
	if _, err := c.in.Write(append(wire.AppendRequest(nil, id, method, []byte(params)), '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := c.out.Next()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		m, err := wire.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if m.IsResponse() && bytes.Equal(m.ID, id) {
			if m.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, m.Error)
			}
			return m.Result, nil
		}
	}
}

// stop closes the process's stdin, sends it SIGTERM, and kills whatever is
// left of its process tree after 10 s.
func (c *rawClient) stop() error {
	c.in.Close()
	return stopTree(c.cmd, syscall.SIGTERM)
}

// countTools returns the number of tools in a tools/list result.
func countTools(result []byte) (int, error) {
	tools, err := wire.Get(result, "tools")
	if err != nil {
		return 0, err
	}
	n := 0
	err = wire.Elements(tools, func([]byte) error { n++; return nil })
	return n, err
}

// clientCPU returns the CPU time the bench process itself has used.
func clientCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// listRun is one repetition's measurement with one client.
type listRun struct {
	tools, bytes int
	p50, p99     time.Duration
	hubCPU       time.Duration // per list
	clientCPU    time.Duration // per list
	idleCPUPerS  time.Duration // the hub's, after the lists
}

func listSuite(dir, hubBin, fixture string) {
	cfg := filepath.Join(dir, "bench-list.yaml")
	check(writeHubConfig(cfg, "logLevel: warn\ncatalog:\n  policy: prefix\n", fixture, listUpstreams,
		"-only", "echo", "-dummy", strconv.Itoa(listDummies)))
	want := listUpstreams * (1 + listDummies)
	var raw, sdk []listRun
	for r := range *reps {
		fmt.Fprintf(os.Stderr, "list: repetition %d/%d\n", r+1, *reps)
		// Each start gets an empty data directory, so its first list
		// waits until every upstream is connected (no cache, no rebuild
		// during the measurement).
		hub := func(name string) *exec.Cmd {
			return own(exec.Command(hubBin, "--config", cfg, "--data-dir", filepath.Join(dir, fmt.Sprintf("list-%d-%s", r, name))))
		}
		run, err := rawLists(hub("raw"), want)
		check(err)
		raw = append(raw, run)
		run, err = sdkLists(hub("sdk"), want)
		check(err)
		sdk = append(sdk, run)
	}

	fmt.Printf("## tools/list of a %d-tool catalog\n\n", want)
	fmt.Printf("%d upstreams (the fixture with -only echo -dummy %d), prefix policy; the list also holds the hub's own hub_* tools. Medians over %d repetitions, each on a freshly started hub whose upstreams are all connected. Hub CPU is the user+system time of the hub process (/proc/<pid>/stat, in 10 ms ticks) over the lists, divided by their number (with the go-sdk client, a handful of ticks: coarse); client CPU is the bench process's own; the raw client writes each request line and reads the response line off the pipe, so nearly all the CPU it leaves goes to the hub.\n\n",
		listUpstreams, listDummies, *reps)
	fmt.Printf("| client | lists | tools | bytes | p50 ms | p99 ms | hub CPU per list ms | client CPU per list ms | target |\n|---|---|---|---|---|---|---|---|---|\n")
	row := func(name string, n int, rs []listRun, target string) {
		f := func(g func(listRun) time.Duration) float64 {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, float64(g(r)))
			}
			return median(xs) / 1e6
		}
		size := "–"
		if rs[0].bytes > 0 {
			size = strconv.Itoa(rs[0].bytes)
		}
		fmt.Printf("| %s | %d | %d | %s | %.2f | %.2f | %.3f | %.2f | %s |\n", name, n, rs[0].tools, size,
			f(func(r listRun) time.Duration { return r.p50 }), f(func(r listRun) time.Duration { return r.p99 }),
			f(func(r listRun) time.Duration { return r.hubCPU }), f(func(r listRun) time.Duration { return r.clientCPU }), target)
	}
	row("raw JSON-RPC lines", *nLists, raw, "hub CPU ≤ 0.5 ms")
	row("go-sdk ClientSession.ListTools", *nSDKLists, sdk, "")
	var idle []float64
	for _, r := range append(raw, sdk...) {
		idle = append(idle, float64(r.idleCPUPerS))
	}
	fmt.Printf("\nThe idle hub (10 connected upstreams, no requests) used %.1f ms of CPU per second (median; /proc resolution 10 ms), which the per-list figures include.\n\n", median(idle)/1e6)
}

// rawLists starts the hub, lists its tools until all want are there, then
// times *nLists lists on the raw client.
func rawLists(cmd *exec.Cmd, want int) (listRun, error) {
	c, err := startRaw(cmd)
	if err != nil {
		return listRun{}, err
	}
	run, err := func() (listRun, error) {
		var run listRun
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			res, err := c.request("tools/list", "{}")
			if err != nil {
				return run, err
			}
			if run.tools, err = countTools(res); err != nil {
				return run, err
			}
			run.bytes = len(res)
			if run.tools >= want {
				break
			}
			if time.Now().After(deadline) {
				return run, fmt.Errorf("tools/list: %d of %d tools after 30s", run.tools, want)
			}
		}
		for range 100 { // warm up
			if _, err := c.request("tools/list", "{}"); err != nil {
				return run, err
			}
		}
		pid := cmd.Process.Pid
		lat := make([]time.Duration, *nLists)
		hub0, own0 := cpuTime(pid), clientCPU()
		for i := range lat {
			t0 := time.Now()
			if _, err := c.request("tools/list", "{}"); err != nil {
				return run, err
			}
			lat[i] = time.Since(t0)
		}
		run.hubCPU = (cpuTime(pid) - hub0) / time.Duration(len(lat))
		run.clientCPU = (clientCPU() - own0) / time.Duration(len(lat))
		run.p50, run.p99 = percentiles(lat)
		run.idleCPUPerS = idleCPU(pid)
		return run, nil
	}()
	return run, errors.Join(err, c.stop())
}

// sdkLists starts the hub, lists its tools with go-sdk until all want are
// there, then times *nSDKLists lists.
func sdkLists(cmd *exec.Cmd, want int) (listRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := dial(ctx, target{name: "hub", start: func() (*exec.Cmd, error) { return cmd, nil }})
	if err != nil {
		return listRun{}, err
	}
	run, err := func() (listRun, error) {
		var run listRun
		for {
			res, err := s.cs.ListTools(ctx, nil)
			if err != nil {
				return run, err
			}
			if run.tools = len(res.Tools); run.tools >= want {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		pid := cmd.Process.Pid
		lat := make([]time.Duration, *nSDKLists)
		hub0, own0 := cpuTime(pid), clientCPU()
		for i := range lat {
			t0 := time.Now()
			if _, err := s.cs.ListTools(ctx, nil); err != nil {
				return run, err
			}
			lat[i] = time.Since(t0)
		}
		run.hubCPU = (cpuTime(pid) - hub0) / time.Duration(len(lat))
		run.clientCPU = (clientCPU() - own0) / time.Duration(len(lat))
		run.p50, run.p99 = percentiles(lat)
		run.idleCPUPerS = idleCPU(pid)
		return run, nil
	}()
	return run, errors.Join(err, s.stop())
}

// percentiles sorts lat and returns its p50 and p99.
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}

// idleCPU returns the CPU time process pid uses in one second of idling.
func idleCPU(pid int) time.Duration {
	c0 := cpuTime(pid)
	time.Sleep(time.Second)
	return cpuTime(pid) - c0
}
