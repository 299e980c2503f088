package main

// The tests of package main are the end-to-end tests: TestMain builds the
// mcp-hub binary and the tests drive it as clients, operators and
// installers do (real processes on stdio and HTTP, signals, exit codes,
// the version the linker sets, the processes left behind, the npm package,
// the README's commands), which only the binary has. Each command's logic
// is tested in-process in package cli, the configuration in config, and so
// on; the few tests here that run in-process check the command tree main
// builds (tree_test.go, readme_test.go).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

var (
	hubBin     string // the mcp-hub binary under test
	fixtureBin string // the fixture MCP server
	ccBin      string // the conformance suite's client of the hub
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-hub-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Children inherit this: no test touches the real user's config or data.
	os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg-data"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg-config"))
	os.Unsetenv("MCP_HUB_CONFIG")
	if hubBin, err = testbin.Build(dir, "./cmd/mcp-hub"); err == nil {
		fixtureBin, err = testbin.Build(dir, "./testdata/fixture")
	}
	if err == nil {
		ccBin, err = testbin.Build(dir, "./testdata/conformance-client")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The binary is on PATH, as an installed one is: its hints name it
	// mcp-hub (TestHintsNameTheBinary runs it as ./mcp-hub too).
	os.Setenv("PATH", filepath.Dir(hubBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeFile writes content to name in a fresh temp dir and returns the path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	return testbin.WriteFile(t, name, content)
}

// rawClient drives a process speaking MCP over stdio with hand-written
// JSON-RPC lines and records every line it writes to stdout.
type rawClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testbin.Buffer
	exited chan struct{}

	mu     sync.Mutex
	lines  [][]byte          // every stdout line, in order
	resp   map[string][]byte // responses by raw id
	notifs [][]byte          // notifications and server requests
	cond   *sync.Cond
	nextID int
}

// startRaw starts bin with args and a raw client on its stdio.
func startRaw(t *testing.T, env []string, bin string, args ...string) *rawClient {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, cmd: cmd, stdin: stdin, stderr: &testbin.Buffer{}, exited: make(chan struct{}), resp: map[string][]byte{}}
	c.cond = sync.NewCond(&c.mu)
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				c.record(bytes.TrimRight(line, "\n"))
			}
			if err != nil {
				break
			}
		}
		_ = cmd.Wait()
		close(c.exited)
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", filepath.Base(bin), c.stderr.String())
		}
	})
	return c
}

func (c *rawClient) record(line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, line)
	if m, err := wire.Parse(line); err == nil {
		if m.IsResponse() {
			c.resp[string(m.ID)] = line
		} else {
			c.notifs = append(c.notifs, line)
		}
	}
	c.cond.Broadcast()
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// request sends a request and returns its raw id.
func (c *rawClient) request(method string, params string) string {
	c.mu.Lock()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	c.mu.Unlock()
	msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		msg += `,"params":` + params
	}
	c.send(msg + "}")
	return id
}

// wait returns the response to id.
func (c *rawClient) wait(id string, d time.Duration) wire.Message {
	c.t.Helper()
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if line, ok := c.resp[id]; ok {
			m, _ := wire.Parse(line)
			return m
		}
		select {
		case <-c.exited:
			c.t.Fatalf("process exited while waiting for response %s", id)
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no response to request %s within %s", id, d)
		}
		c.cond.Wait()
	}
}

// call sends a request and waits for its response.
func (c *rawClient) call(method, params string) wire.Message {
	c.t.Helper()
	return c.wait(c.request(method, params), 20*time.Second)
}

// initialize performs the MCP handshake.
func (c *rawClient) initialize() wire.Message {
	c.t.Helper()
	m := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw-test","version":"1"}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// waitNotification waits for a notification with the given method, counting
// only those that arrive after the first skip of them.
func (c *rawClient) waitNotification(method string, skip int, d time.Duration) []byte {
	c.t.Helper()
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		seen := 0
		for _, n := range c.notifs {
			if m, _ := wire.Parse(n); m.Method == method {
				if seen == skip {
					return n
				}
				seen++
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s notification (#%d) within %s", method, skip+1, d)
		}
		c.cond.Wait()
	}
}

func (c *rawClient) countNotifications(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.notifs {
		if m, _ := wire.Parse(l); m.Method == method {
			n++
		}
	}
	return n
}

// allLines returns every stdout line so far.
func (c *rawClient) allLines() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.lines...)
}

// closeStdin closes the process's stdin and waits for it to exit.
func (c *rawClient) closeStdin(d time.Duration) (exitCode int, took time.Duration) {
	c.t.Helper()
	start := time.Now()
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(d):
		c.t.Fatalf("process did not exit within %s of stdin closing", d)
	}
	return c.cmd.ProcessState.ExitCode(), time.Since(start)
}

// toolNames extracts the tool names of a tools/list result.
func toolNames(t *testing.T, result []byte) []string {
	t.Helper()
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("tools/list result: %v", err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// textOf returns the concatenated text content of a tool result.
func textOf(t *testing.T, result []byte) string {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("tool result %s: %v", result, err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// cli runs an mcp-hub command on dataDir, with an empty config file.
func cli(t *testing.T, dataDir string, args ...string) (string, int) {
	t.Helper()
	return cliConfig(t, dataDir, writeFile(t, "none.yaml", ""), args...)
}

// cliConfig runs an mcp-hub command on dataDir and a config file.
func cliConfig(t *testing.T, dataDir, cfg string, args ...string) (string, int) {
	t.Helper()
	return runCLI(t, dataDir, cfg, "", nil, args...)
}

// runCLI runs an mcp-hub command on dataDir and a config file, with stdin
// and extra environment, and returns its stdout and stderr together and
// its exit code.
func runCLI(t *testing.T, dataDir, cfg, stdin string, env []string, args ...string) (string, int) {
	t.Helper()
	// The command, then the flags: args may end with "-- COMMAND ARGS...".
	full := append([]string{args[0], "--data-dir", dataDir, "--config", cfg}, args[1:]...)
	cmd := exec.Command(hubBin, full...)
	cmd.Env = append(append(os.Environ(), "MCP_HUB_CONFIG="), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}
