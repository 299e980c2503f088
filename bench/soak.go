package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// The soak suite pipelines a million echo calls through the hub on one raw
// JSON-RPC stdio session (and as many straight to the fixture, for the
// throughput ratio) and accounts for every response: each request's id and
// payload must come back exactly once, with the payload it sent.

var (
	nSoak       = flag.Int("soak", 1_000_000, "soak suite: calls per target")
	soakWindow  = flag.Int("soakwindow", 32, "soak suite: requests in flight")
	soakTargets = flag.String("soaktargets", "", "soak suite: only these targets besides direct (comma-separated: hub, hub → HTTP upstream)")
)

// soakRun is the accounting of one soak.
type soakRun struct {
	calls, ok, rpcErrors, toolErrors int
	wrongPayload, duplicate, unknown int
	missing                          int
	elapsed                          time.Duration
	cpu                              time.Duration // of the process the client spawned
	rss0, rss1, hwm                  int64         // kB: after initialize, at the end, peak
	threads0, threads1               int64
	tenths                           []time.Duration // wall time of each tenth of the calls
	firstProblem                     string
}

func (r soakRun) accounted() bool {
	return r.ok == r.calls && r.rpcErrors+r.toolErrors+r.wrongPayload+r.duplicate+r.unknown+r.missing == 0
}

func soakSuite(dir, hubBin, fixture string) {
	cfg := filepath.Join(dir, "bench-soak.yaml")
	check(writeHubConfig(cfg, "logLevel: warn\n", fixture, 1, "-only", "echo,big"))
	// The remote target's upstream: the fixture serving streamable HTTP and
	// answering every POST with an SSE stream (the SDKs' default).
	up, err := startDirectHTTP(fixture, "streamable", "-only", "echo,big")
	check(err)
	defer up.stop()
	remoteCfg := filepath.Join(dir, "bench-soak-remote.yaml")
	check(writeURLHubConfig(remoteCfg, "logLevel: warn\n", up.url))
	hub := func(cfg, data string) func() *exec.Cmd {
		return func() *exec.Cmd {
			args := []string{"--config", cfg, "--data-dir", filepath.Join(dir, data)}
			if *hubProf != "" {
				args = append(args, "--cpuprofile", *hubProf)
			}
			return own(exec.Command(hubBin, args...))
		}
	}
	targets := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"direct", func() *exec.Cmd { return own(exec.Command(fixture, "-only", "echo,big")) }},
		{"hub", hub(cfg, "data-soak")},
		{"hub → HTTP upstream", hub(remoteCfg, "data-soak-remote")},
	}
	names := *soakTargets
	runs := map[string]soakRun{}
	var ran []string
	for _, t := range targets {
		if names != "" && !slices.Contains(strings.Split(names, ","), t.name) && t.name != "direct" {
			continue
		}
		fmt.Fprintf(os.Stderr, "soak: %s, %d calls\n", t.name, *nSoak)
		r, err := soak(t.cmd(), *nSoak, *soakWindow)
		check(err)
		runs[t.name] = r
		ran = append(ran, t.name)
	}
	fmt.Printf("## soak: %d calls, every response accounted for\n\n", *nSoak)
	fmt.Printf("One raw JSON-RPC stdio session, %d requests in flight, each `echo {\"seq\":<id>}`; a response counts as ok only if its id is one still outstanding and its text is that request's payload. \"hub\" is the hub with the fixture as its one stdio upstream, \"hub → HTTP upstream\" the hub with the fixture serving streamable HTTP (SSE answers) as its one upstream; their default maxInFlight of 10 queues the rest.\n\n", *soakWindow)
	fmt.Printf("| |")
	for _, name := range ran {
		fmt.Printf(" %s |", name)
	}
	fmt.Printf("\n|---|%s\n", strings.Repeat("---|", len(ran)))
	row := func(label string, f func(soakRun) string) {
		fmt.Printf("| %s |", label)
		for _, name := range ran {
			fmt.Printf(" %s |", f(runs[name]))
		}
		fmt.Println()
	}
	row("ok / sent", func(r soakRun) string { return fmt.Sprintf("%d / %d", r.ok, r.calls) })
	row("JSON-RPC errors, isError results", func(r soakRun) string { return fmt.Sprintf("%d, %d", r.rpcErrors, r.toolErrors) })
	row("wrong payload, duplicate, unknown id, never answered", func(r soakRun) string {
		return fmt.Sprintf("%d, %d, %d, %d", r.wrongPayload, r.duplicate, r.unknown, r.missing)
	})
	row("wall time", func(r soakRun) string { return r.elapsed.Round(100 * time.Millisecond).String() })
	row("calls/s", func(r soakRun) string { return fmt.Sprintf("%.0f", float64(r.calls)/r.elapsed.Seconds()) })
	row("calls/s in the first, the slowest and the last tenth", func(r soakRun) string {
		if len(r.tenths) == 0 {
			return "-"
		}
		per := float64(r.calls / 10)
		return fmt.Sprintf("%.0f, %.0f, %.0f", per/r.tenths[0].Seconds(), per/slices.Max(r.tenths).Seconds(),
			per/r.tenths[len(r.tenths)-1].Seconds())
	})
	row("CPU per call of the spawned process", func(r soakRun) string {
		return fmt.Sprintf("%.1f µs", float64(r.cpu)/float64(r.calls)/1e3)
	})
	row("VmRSS after initialize → at the end (VmHWM), MB", func(r soakRun) string {
		return fmt.Sprintf("%.1f → %.1f (%.1f)", float64(r.rss0)/1024, float64(r.rss1)/1024, float64(r.hwm)/1024)
	})
	row("threads after initialize → at the end", func(r soakRun) string { return fmt.Sprintf("%d → %d", r.threads0, r.threads1) })
	if h, ok := runs["hub"]; ok {
		fmt.Printf("\nThroughput hub/direct: %.2f×. ", runs["direct"].elapsed.Seconds()/h.elapsed.Seconds())
	}
	for _, name := range ran {
		if r := runs[name]; !r.accounted() {
			fmt.Printf("**%s: not every response accounted for** (first: %s). ", name, r.firstProblem)
		}
	}
	fmt.Println()
	fmt.Println()
}

func sumDur(ds []time.Duration) (t time.Duration) {
	for _, d := range ds {
		t += d
	}
	return t
}

// soak starts cmd, initializes a session on it and pipelines n echo calls
// with window requests in flight. It stops early when no response arrives
// for 60 s, and counts what was never answered.
func soak(cmd *exec.Cmd, n, window int) (soakRun, error) {
	c, err := startRaw(cmd)
	if err != nil {
		return soakRun{}, err
	}
	pid := cmd.Process.Pid
	r := soakRun{calls: n, rss0: memKB(pid, "VmRSS"), threads0: memKB(pid, "Threads")}
	// Let a hub connect its upstream: the first echo may wait for it.
	if _, err := c.request("tools/call", `{"name":"echo","arguments":{"seq":0}}`); err != nil {
		return r, errors.Join(err, c.stop())
	}

	const (
		pending = iota
		sent
		done
	)
	state := make([]uint8, n+1)
	var mu sync.Mutex
	slots := make(chan struct{}, window)
	stop := make(chan struct{})
	writeErr := make(chan error, 1)
	cpu0 := cpuTime(pid)
	t0 := time.Now()
	go func() { // the writer: owned by soak, ends when all are sent or stop closes
		var buf []byte
		for i := 1; i <= n; i++ {
			select {
			case slots <- struct{}{}:
			case <-stop:
				writeErr <- nil
				return
			}
			mu.Lock()
			state[i] = sent
			mu.Unlock()
			id := strconv.AppendInt(nil, int64(i), 10)
			params := fmt.Appendf(nil, `{"name":"echo","arguments":{"seq":%d}}`, i)
			buf = append(wire.AppendRequest(buf[:0], id, "tools/call", params), '\n')
			if _, err := c.in.Write(buf); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()

	problem := func(format string, args ...any) {
		if r.firstProblem == "" {
			r.firstProblem = fmt.Sprintf(format, args...)
		}
	}
	lines := make(chan []byte, 256)
	readErr := make(chan error, 1)
	go func() { // the reader: ends at EOF, which c.stop causes
		for {
			line, err := c.out.Next()
			if err != nil {
				readErr <- err
				close(lines)
				return
			}
			lines <- bytes.Clone(line)
		}
	}()
	answered := 0
	idle := time.NewTimer(60 * time.Second)
	var loopErr error
loop:
	for answered < n {
		select {
		case line, ok := <-lines:
			if !ok {
				loopErr = fmt.Errorf("the session ended after %d responses: %w", answered, <-readErr)
				break loop
			}
			idle.Reset(60 * time.Second)
			m, err := wire.Parse(line)
			if err != nil {
				problem("unparsable line: %v", err)
				continue
			}
			if !m.IsResponse() {
				continue
			}
			id, err := strconv.Atoi(string(m.ID))
			mu.Lock()
			st := uint8(pending)
			if err == nil && id >= 1 && id <= n {
				st = state[id]
				state[id] = done
			}
			mu.Unlock()
			switch {
			case err != nil || id < 1 || id > n || st == pending:
				r.unknown++
				problem("response with id %s that was never sent", m.ID)
				continue
			case st == done:
				r.duplicate++
				problem("second response for id %d", id)
				continue
			}
			answered++
			<-slots
			if answered%max(n/10, 1) == 0 && len(r.tenths) < 10 {
				r.tenths = append(r.tenths, time.Since(t0)-sumDur(r.tenths))
			}
			switch {
			case m.Error != nil:
				r.rpcErrors++
				problem("id %d: error %s", id, m.Error)
			case bytes.Contains(m.Result, []byte(`"isError":true`)):
				r.toolErrors++
				problem("id %d: isError result %.200s", id, m.Result)
			case !bytes.Contains(m.Result, fmt.Appendf(nil, `{\"seq\":%d}`, id)):
				r.wrongPayload++
				problem("id %d: result %.200s", id, m.Result)
			default:
				r.ok++
			}
		case <-idle.C:
			loopErr = fmt.Errorf("no response for 60 s after %d of %d", answered, n)
			break loop
		}
	}
	r.elapsed = time.Since(t0)
	r.cpu = cpuTime(pid) - cpu0
	r.rss1, r.hwm, r.threads1 = memKB(pid, "VmRSS"), memKB(pid, "VmHWM"), memKB(pid, "Threads")
	close(stop)
	r.missing = n - answered
	if loopErr != nil {
		problem("%v", loopErr)
	}
	err = c.stop()
	for range lines { // drain until the reader sees EOF
	}
	return r, errors.Join(err, <-writeErr)
}
