package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rss suite reads the hub's resident memory (VmRSS, and its peak VmHWM,
// from /proc/<pid>/status) idle after startup and under 32 sessions.

const (
	rssUpstreams = 3
	rssBigCalls  = 2000
)

// rssPhase is one point at which the suite reads the hub's memory.
type rssPhase struct {
	label, target string
}

var rssPhases = []rssPhase{
	{fmt.Sprintf("stdio front, %d upstreams, idle after start-up and 3 tools/list", rssUpstreams), "≤ 15 MB"},
	{fmt.Sprintf("HTTP front (/mcp), %d upstreams, 1 session, idle after start-up and 3 tools/list", rssUpstreams), "≤ 15 MB"},
	{"HTTP front, 32 sessions open, after N1 echo calls at concurrency 32 (one per session)", "≤ 25 MB"},
	{fmt.Sprintf("HTTP front, 32 sessions open, then %d calls of big (100 KiB results) at concurrency 32", rssBigCalls), ""},
}

// memReading is VmRSS and VmHWM in kB.
type memReading struct{ rss, hwm int64 }

func readMem(pid int) memReading {
	return memReading{memKB(pid, "VmRSS"), memKB(pid, "VmHWM")}
}

func rssSuite(dir, hubBin, fixture string) {
	echo := map[string]any{"msg": "hello"}
	nLoad := *calls2 / 2
	res := make([][]memReading, len(rssPhases))
	var upstreamHWM []float64
	for r := range *reps {
		fmt.Fprintf(os.Stderr, "rss: repetition %d/%d\n", r+1, *reps)

		cfg := filepath.Join(dir, "bench-rss.yaml")
		check(writeHubConfig(cfg, "logLevel: warn\n", fixture, rssUpstreams, "-only", "echo,big"))
		s, err := connect(target{name: "hub", start: func() (*exec.Cmd, error) {
			return own(exec.Command(hubBin, "--config", cfg, "--data-dir", filepath.Join(dir, "data-rss"))), nil
		}})
		check(err)
		check(idleLists(s.cs))
		res[0] = append(res[0], readMem(s.cmd.Process.Pid))
		check(s.stop())

		srv, err := startHubHTTP(dir, hubBin, fixture, "streamable", rssUpstreams, "-only", "echo,big")
		check(err)
		hc := httpClient(srv.tok)
		pid := srv.cmd.Process.Pid
		sessions := make([]*mcp.ClientSession, 32)
		err = func() error {
			for i := range sessions {
				if sessions[i], err = connectHTTP(srv, "streamable", "echo", hc); err != nil {
					return err
				}
				if i == 0 {
					if err := idleLists(sessions[0]); err != nil {
						return err
					}
					res[1] = append(res[1], readMem(pid))
				}
			}
			if _, err := tryRunOn(sessions, pid, 32, nLoad, "echo", echo); err != nil {
				return err
			}
			res[2] = append(res[2], readMem(pid))
			if _, err := tryRunOn(sessions, pid, 32, rssBigCalls, "big", map[string]any{"kib": 100}); err != nil {
				return err
			}
			res[3] = append(res[3], readMem(pid))
			m := peakRSS(pid, fixture)
			upstreamHWM = append(upstreamHWM, float64(m.upstreamKB)/float64(max(m.upstreams, 1)))
			return nil
		}()
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
		hc.CloseIdleConnections()
		srv.stop()
		check(err)
	}

	fmt.Printf("## hub memory: RSS idle and under 32 sessions\n\n")
	fmt.Printf("The hub process alone (its upstreams, the fixture -only echo,big, are separate processes: VmHWM %.1f MB each, median). VmRSS is the resident set at the reading, VmHWM its peak so far; MB = 2^20 bytes; medians [min–max] over %d repetitions. The HTTP hub runs with maxInFlight 64, as in the http suite.\n\n",
		median(upstreamHWM)/1024, *reps)
	fmt.Printf("| hub | VmRSS MB | VmHWM MB | target (VmHWM) |\n|---|---|---|---|\n")
	for i, p := range rssPhases {
		var rss, hwm []float64
		for _, m := range res[i] {
			rss = append(rss, float64(m.rss))
			hwm = append(hwm, float64(m.hwm))
		}
		label := p.label
		if i == 2 {
			label = fmt.Sprintf("HTTP front, 32 sessions open, after %d echo calls at concurrency 32 (one per session)", nLoad)
		}
		fmt.Printf("| %s | %s | %s | %s |\n", label, mbSpread(rss), mbSpread(hwm), p.target)
	}
	fmt.Println()
}

// idleLists lists the tools three times, then leaves the hub alone for half
// a second.
func idleLists(cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return errors.Join(errors.New("tools/list"), err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	return nil
}

// mbSpread formats kB values as "median [min–max]" in MB.
func mbSpread(kb []float64) string {
	return fmt.Sprintf("%.1f [%.1f–%.1f]", median(kb)/1024, slices.Min(kb)/1024, slices.Max(kb)/1024)
}
