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
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// The code suite measures code mode (hub_run_code) against the same work
// done call by call, as a model does it without code mode:
//
//   - a 25-call job over the npm memory and filesystem reference servers
//     ("read these 12 notes and add each person they name to the memory
//     graph": list the directory, read 12 files, create 12 entities):
//     client↔hub requests and bytes the client receives, each way;
//   - the runtime's start cost: hub_run_code of `return 1` against a direct
//     call of the fixture's echo, and a script run in-process;
//   - the overhead of an inner call: a script making n echo calls against n
//     direct calls from the client.

var codeCalls = flag.Int("code-n", 200, "code suite: echo calls per script (and direct calls) for the per-call overhead")

// countingReader counts the bytes a client receives.
type countingReader struct {
	r io.ReadCloser
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

// codeHub is a stdio hub with code mode on, and a client session whose
// received bytes are counted.
type codeHub struct {
	cmd  *exec.Cmd
	cs   *mcp.ClientSession
	recv *countingReader
}

func startCodeHub(dir, hubBin, fixture string) (*codeHub, error) {
	root, err := testbin.Root()
	if err != nil {
		return nil, err
	}
	mods := filepath.Join(root, ".cache", "npm", "node_modules", "@modelcontextprotocol")
	memory, files := filepath.Join(mods, "server-memory", "dist", "index.js"), filepath.Join(mods, "server-filesystem", "dist", "index.js")
	for _, p := range []string{memory, files} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("code suite: %s is missing: run scripts/npm-deps.sh (make bench does)", p)
		}
	}
	notes := filepath.Join(dir, "notes")
	if err := writeNotes(notes); err != nil {
		return nil, err
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cfg := filepath.Join(dir, "bench-code.yaml")
	yaml := fmt.Sprintf(`logLevel: warn
codeMode: {mode: "on", maxCalls: %d}
mcpServers:
  memory: {command: %s, args: [%s], env: {MEMORY_FILE_PATH: %s}}
  filesystem: {command: %s, args: [%s, %s]}
  fx: {command: %s, args: ["-only", "echo"]}
`, max(*codeCalls, 100), q(*nodeBin), q(memory), q(filepath.Join(dir, "memory.jsonl")), q(*nodeBin), q(files), q(notes), q(fixture))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	cmd := own(exec.Command(hubBin, "--config", cfg, "--data-dir", filepath.Join(dir, "data-code")))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &codeHub{cmd: cmd, recv: &countingReader{r: stdout}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	h.cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: h.recv, Writer: stdin}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		h.stop()
		return nil, err
	}
	// Wait until all three servers answer.
	for _, c := range [][2]string{{"fx", "echo"}, {"memory", "read_graph"}, {"filesystem", "list_allowed_directories"}} {
		for i := 0; ; i++ {
			res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "hub_call_tool", Arguments: map[string]any{"server": c[0], "tool": c[1], "arguments": map[string]any{}}})
			if err == nil && !res.IsError {
				break
			}
			if i > 600 {
				h.stop()
				return nil, fmt.Errorf("code suite: %s/%s not ready: %v %+v", c[0], c[1], err, res)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return h, nil
}

func (h *codeHub) stop() {
	if h.cs != nil {
		h.cs.Close()
	}
	_ = reapTree(h.cmd.Process.Pid, descendants(h.cmd.Process.Pid), nil)
}

// writeNotes writes the 12 notes of the job, each naming one person among
// a paragraph of ordinary text.
func writeNotes(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	people := []string{"Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov", "Donald Knuth",
		"Margaret Hamilton", "Ken Thompson", "Frances Allen", "John McCarthy", "Radia Perlman", "Leslie Lamport"}
	filler := strings.Repeat("The meeting covered the roadmap, the budget for the next quarter, open hiring, and the migration of the build system. ", 10)
	for i, p := range people {
		body := fmt.Sprintf("# Notes %02d\n\n%s\n\nPerson: %s\nRole: speaker\n\n%s\n", i+1, filler, p, filler)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%02d.md", i+1)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

var personRE = regexp.MustCompile(`(?m)^Person: (.+)$`)

// jobScript is the job as one hub_run_code script.
const jobScript = `
const dir = callTool("filesystem", "list_directory", {path: input.dir});
const files = dir.content[0].text.split("\n").filter(l => l.startsWith("[FILE]")).map(l => l.slice(7).trim());
const added = [];
for (const f of files) {
  const r = callTool("filesystem", "read_text_file", {path: input.dir + "/" + f});
  if (r.isError) { log("cannot read", f); continue; }
  const m = /^Person: (.+)$/m.exec(r.content[0].text);
  if (!m) continue;
  const name = m[1] + " " + input.run;
  const c = callTool("memory", "create_entities", {entities: [{name, entityType: "person", observations: ["named in " + f]}]});
  if (!c.isError) added.push(name);
}
return {files: files.length, added};
`

// jobResult is one run of the job.
type jobResult struct {
	requests int
	bytes    int64
	wall     time.Duration
	added    int
}

// jobDirect does the job call by call, as a model without code mode.
func (h *codeHub) jobDirect(ctx context.Context, dir, run string) (jobResult, error) {
	var r jobResult
	start, before := time.Now(), h.recv.n.Load()
	call := func(server, tool string, args map[string]any) (string, error) {
		r.requests++
		res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "hub_call_tool", Arguments: map[string]any{"server": server, "tool": tool, "arguments": args}})
		if err != nil {
			return "", err
		}
		if res.IsError || len(res.Content) == 0 {
			return "", fmt.Errorf("%s/%s failed: %+v", server, tool, res.Content)
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	list, err := call("filesystem", "list_directory", map[string]any{"path": dir})
	if err != nil {
		return r, err
	}
	for _, l := range strings.Split(list, "\n") {
		f, ok := strings.CutPrefix(l, "[FILE] ")
		if !ok {
			continue
		}
		text, err := call("filesystem", "read_text_file", map[string]any{"path": dir + "/" + strings.TrimSpace(f)})
		if err != nil {
			return r, err
		}
		m := personRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		if _, err := call("memory", "create_entities", map[string]any{"entities": []map[string]any{{"name": m[1] + " " + run, "entityType": "person", "observations": []string{"named in " + f}}}}); err != nil {
			return r, err
		}
		r.added++
	}
	r.wall, r.bytes = time.Since(start), h.recv.n.Load()-before
	return r, nil
}

// jobCode does the job as one script.
func (h *codeHub) jobCode(ctx context.Context, dir, run string) (jobResult, error) {
	start, before := time.Now(), h.recv.n.Load()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "hub_run_code", Arguments: map[string]any{"code": jobScript, "input": map[string]any{"dir": dir, "run": run}}})
	if err != nil {
		return jobResult{}, err
	}
	if res.IsError {
		return jobResult{}, fmt.Errorf("hub_run_code: %s", res.Content[0].(*mcp.TextContent).Text)
	}
	var out struct {
		Result struct{ Added []string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	return jobResult{requests: 1, bytes: h.recv.n.Load() - before, wall: time.Since(start), added: len(out.Result.Added)}, nil
}

// timeCall returns the wall time of one tools/call.
func (h *codeHub) timeCall(ctx context.Context, name string, args map[string]any) (time.Duration, error) {
	t := time.Now()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err == nil && res.IsError {
		err = errors.New(res.Content[0].(*mcp.TextContent).Text)
	}
	return time.Since(t), err
}

func codeSuite(dir, hubBin, fixture string) {
	h, err := startCodeHub(dir, hubBin, fixture)
	check(err)
	defer h.stop()
	ctx := context.Background()
	notes := filepath.Join(dir, "notes")

	var direct, code []jobResult
	for r := range *reps {
		d, err := h.jobDirect(ctx, notes, fmt.Sprintf("d%d", r))
		check(err)
		c, err := h.jobCode(ctx, notes, fmt.Sprintf("c%d", r))
		check(err)
		direct, code = append(direct, d), append(code, c)
	}
	if direct[0].added != 12 || code[0].added != 12 {
		check(fmt.Errorf("code suite: the job added %d (direct) and %d (code) people, want 12", direct[0].added, code[0].added))
	}
	med := func(rs []jobResult, f func(jobResult) float64) float64 {
		var xs []float64
		for _, r := range rs {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	bytesOf := func(r jobResult) float64 { return float64(r.bytes) }
	wallOf := func(r jobResult) float64 { return float64(r.wall) / 1e6 }

	// Start cost and per-call overhead, interleaved.
	n := *codeCalls
	loop := fmt.Sprintf(`for (let i = 0; i < %d; i++) callTool("fx", "echo", {message: "hello"}); return %d`, n, n)
	var echo, start, script, directN []float64
	for range max(*reps, 5) {
		for range 20 {
			d, err := h.timeCall(ctx, "hub_call_tool", map[string]any{"server": "fx", "tool": "echo", "arguments": map[string]any{"message": "hello"}})
			check(err)
			echo = append(echo, float64(d))
			d, err = h.timeCall(ctx, "hub_run_code", map[string]any{"code": "return 1"})
			check(err)
			start = append(start, float64(d))
		}
		d, err := h.timeCall(ctx, "hub_run_code", map[string]any{"code": loop})
		check(err)
		script = append(script, float64(d))
		t := time.Now()
		for range n {
			_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "hub_call_tool", Arguments: map[string]any{"server": "fx", "tool": "echo", "arguments": map[string]any{"message": "hello"}}})
			check(err)
		}
		directN = append(directN, float64(time.Since(t)))
	}
	// The runtime alone, in-process.
	var inproc []float64
	r := codemode.NewRunner(codemode.Limits{})
	for range 200 {
		t := time.Now()
		_, err := r.Run(ctx, nil, codemode.Script{Code: "return 1"})
		check(err)
		inproc = append(inproc, float64(time.Since(t)))
	}

	us := func(ns float64) string { return fmt.Sprintf("%.0f µs", ns/1e3) }
	fmt.Printf("## code: code mode (hub_run_code) against call by call\n\n")
	fmt.Printf("The job: list a directory of 12 notes (filesystem server), read each, add the person it names to the memory graph (memory server): 25 tool calls; @modelcontextprotocol/server-filesystem and server-memory from .cache/npm under node %s, behind one stdio mcp-hub. Call by call = the client makes each call through hub_call_tool and receives every result, as a model does; code mode = one hub_run_code whose script makes the 25 calls and returns {files, added}. Bytes = what the client's stdio read during the job. Medians of %d runs.\n\n", nodeVersion(), *reps)
	fmt.Printf("| | client→hub requests | bytes to the client | wall ms |\n|---|---|---|---|\n")
	fmt.Printf("| call by call | %d | %.0f | %.1f |\n", direct[0].requests, med(direct, bytesOf), med(direct, wallOf))
	fmt.Printf("| code mode | %d | %.0f | %.1f |\n", code[0].requests, med(code, bytesOf), med(code, wallOf))
	fmt.Printf("| code mode / call by call | %.2f | %.3f | %.2f |\n\n", float64(code[0].requests)/float64(direct[0].requests), med(code, bytesOf)/med(direct, bytesOf), med(code, wallOf)/med(direct, wallOf))

	perInner := (median(script) - median(start)) / float64(n)
	perDirect := median(directN) / float64(n)
	fmt.Printf("Runtime cost (fixture echo through hub_call_tool; medians; timings on a shared machine are noisy, the ratios less so):\n\n")
	fmt.Printf("| measure | value |\n|---|---|\n")
	fmt.Printf("| direct call (client → hub → echo → client) | %s |\n", us(median(echo)))
	fmt.Printf("| hub_run_code `return 1` (start a runtime, run, answer) | %s (%.1f× a direct call) |\n", us(median(start)), median(start)/median(echo))
	fmt.Printf("| the runtime alone in-process (QuickJS VM, prelude, `return 1`, close) | %s |\n", us(median(inproc)))
	fmt.Printf("| one inner call in a script of %d (script time − start) / n | %s |\n", n, us(perInner))
	fmt.Printf("| one direct call in a loop of %d from the client | %s |\n", n, us(perDirect))
	fmt.Printf("| inner call / direct call | %.2f |\n\n", perInner/perDirect)
}
