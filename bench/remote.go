package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The remote suite: the hub in front of a streamable HTTP upstream (the
// fixture, answering each POST with an SSE stream as servers on the SDKs'
// defaults do, or with a JSON body), through both of its fronts, against
// the client talking to that upstream directly and against the floors of
// one extra hop (an HTTP reverse proxy for the HTTP front, a stdio bridge
// for the stdio front), all in one run.

var remoteReplies = flag.String("remote", "sse,json", "remote suite: the upstream's reply styles to measure (sse, json)")

// remoteSide is one way of reaching the upstream in the remote suite.
type remoteSide struct {
	name  string // column
	http  bool   // the client speaks streamable HTTP (32 sessions) rather than stdio
	floor bool
}

var remoteOnly = flag.String("remote-sides", "", "remote suite: measure only these sides (comma-separated names as in the table; direct is always measured)")

var remoteSides = []remoteSide{
	{name: "direct", http: true},
	{name: "HTTP relay", http: true, floor: true},
	{name: "hub /mcp", http: true},
	{name: "stdio bridge", floor: true},
	{name: "hub stdio"},
}

// writeURLHubConfig writes a hub config whose one upstream, fx, is the
// streamable HTTP endpoint u.
func writeURLHubConfig(path, head, u string) error {
	return os.WriteFile(path, []byte(benchHead+head+"mcpServers:\n  fx:\n    url: \""+u+"\"\n"), 0o600)
}

func remoteSuite(dir, hubBin, fixture string) {
	self, err := os.Executable()
	check(err)
	sides := remoteSides
	if *remoteOnly != "" {
		sides = sides[:1]
		for _, s := range remoteSides[1:] {
			if slices.Contains(strings.Split(*remoteOnly, ","), s.name) {
				sides = append(sides, s)
			}
		}
	}
	echo := map[string]any{"msg": "hello"}
	for _, reply := range strings.Split(*remoteReplies, ",") {
		fxArgs := []string{"-only", "echo,big"}
		if reply == "json" {
			fxArgs = append(fxArgs, "-json-response")
		}
		type agg struct{ p50c1, rps32, cpu32, up32, big []float64 }
		res := map[string]*agg{}
		for _, s := range remoteSides {
			res[s.name] = &agg{}
		}
		for r := 0; r < *reps; r++ {
			up, err := startDirectHTTP(fixture, "streamable", fxArgs...)
			check(err)
			upPID := up.cmd.Process.Pid
			for _, side := range sides {
				a := res[side.name]
				var c1, c32, big runResult
				var up0 time.Duration
				if side.http {
					srv := up
					switch side.name {
					case "HTTP relay":
						srv, err = startListening(own(exec.Command(self, "-relay-http", up.url)), false)
					case "hub /mcp":
						cfg := filepath.Join(dir, "bench-remote-http.yaml")
						check(writeURLHubConfig(cfg, hubHTTPHead, up.url))
						srv, err = startHubHTTPConfig(dir, hubBin, cfg, "streamable")
					}
					check(err)
					hc := httpClient(srv.tok)
					sessions := make([]*mcp.ClientSession, 32)
					for i := range sessions {
						sessions[i], err = connectHTTP(srv, "streamable", "echo", hc)
						check(err)
					}
					pid := srv.cmd.Process.Pid
					runOn(sessions[:1], pid, 1, 300, "echo", echo) // warm up
					c1 = runOn(sessions[:1], pid, 1, *calls1, "echo", echo)
					up0 = cpuTime(upPID)
					c32 = runOn(sessions, pid, 32, *calls2/2, "echo", echo)
					a.up32 = append(a.up32, float64((cpuTime(upPID)-up0)/time.Duration(*calls2/2)))
					big = runOn(sessions[:1], pid, 1, *nBig, "big", map[string]any{"kib": 100})
					for _, cs := range sessions {
						cs.Close()
					}
					hc.CloseIdleConnections()
					if srv != up {
						srv.stop()
					}
				} else {
					t := target{name: side.name, start: func() (*exec.Cmd, error) {
						return exec.Command(self, "-bridge", up.url), nil
					}}
					if side.name == "hub stdio" {
						cfg := filepath.Join(dir, "bench-remote-stdio.yaml")
						check(writeURLHubConfig(cfg, "logLevel: warn\nlimits:\n  maxInFlight: 64\n", up.url))
						t.start = func() (*exec.Cmd, error) {
							args := []string{"--config", cfg, "--data-dir", filepath.Join(dir, "data-remote-stdio")}
							if *hubProf != "" {
								args = append(args, "--cpuprofile", *hubProf)
							}
							return exec.Command(hubBin, args...), nil
						}
					}
					s, err := connect(t)
					check(err)
					run(s, 1, 300, "echo", echo)
					c1 = run(s, 1, *calls1, "echo", echo)
					up0 = cpuTime(upPID)
					c32 = run(s, 32, *calls2/2, "echo", echo)
					a.up32 = append(a.up32, float64((cpuTime(upPID)-up0)/time.Duration(*calls2/2)))
					big = run(s, 1, *nBig, "big", map[string]any{"kib": 100})
					check(s.stop())
				}
				a.p50c1 = append(a.p50c1, float64(c1.p50))
				a.rps32 = append(a.rps32, c32.rps)
				a.cpu32 = append(a.cpu32, float64(c32.cpuPerCall))
				a.big = append(a.big, float64(big.p50))
			}
			up.stop()
		}
		style := map[string]string{"sse": "an SSE stream", "json": "a JSON body"}[reply]
		fmt.Printf("## tools/call to a streamable HTTP upstream answering with %s\n\n", style)
		fmt.Printf("The upstream is the fixture serving streamable HTTP (go-sdk). \"direct\": the client talks to it; \"HTTP relay\": through a minimal reverse proxy (the floor of one extra HTTP hop); \"hub /mcp\": through the hub's HTTP front; \"stdio bridge\": a stdio process that POSTs each message and writes back the answer (the floor of a stdio front); \"hub stdio\": through the hub over stdio. HTTP clients use 32 sessions at concurrency 32, stdio clients one session with 32 calls in flight. Ratios are against direct; the hub's targets are ≥ 0.9× throughput and ≤ 150 µs of hub CPU per call.\n\n")
		fmt.Printf("| metric |")
		for _, s := range sides {
			fmt.Printf(" %s |", s.name)
		}
		fmt.Printf("\n|---|%s\n", strings.Repeat("---|", len(sides)))
		d := res["direct"]
		line := func(label string, f func(a *agg) string) {
			fmt.Printf("| %s |", label)
			for _, s := range sides {
				fmt.Printf(" %s |", f(res[s.name]))
			}
			fmt.Println()
		}
		line("echo p50, concurrency 1", func(a *agg) string { return us(median(a.p50c1)) + " µs" })
		line("Δp50 vs direct", func(a *agg) string { return fmt.Sprintf("%+.0f µs", (median(a.p50c1)-median(d.p50c1))/1e3) })
		line("calls/s, concurrency 32", func(a *agg) string { return fmt.Sprintf("%.0f", median(a.rps32)) })
		line("throughput vs direct", func(a *agg) string { return fmt.Sprintf("%.2f×", median(a.rps32)/median(d.rps32)) })
		line("CPU per call of the process in the middle (direct: upstream)", func(a *agg) string { return us(median(a.cpu32)) + " µs" })
		line("upstream CPU per call", func(a *agg) string { return us(median(a.up32)) + " µs" })
		line("100 KiB result p50", func(a *agg) string { return fmt.Sprintf("%.2f ms", median(a.big)/1e6) })
		line("100 KiB Δp50 vs direct", func(a *agg) string { return fmt.Sprintf("%+.2f ms", (median(a.big)-median(d.big))/1e6) })
		fmt.Println()
	}
}
