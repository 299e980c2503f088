package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func TestVersion(t *testing.T) {
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(sdkModule) + ` (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatalf("go.mod does not require %s", sdkModule)
	}
	for _, args := range [][]string{{"--version"}, {"serve", "--version"}} {
		out, err := exec.Command(hubBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("mcp-hub %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		for _, re := range []string{
			`^mcp-hub \S+\n`,
			`(?m)^module: github\.com/mcp-hub/mcp-hub \S+$`,
			`(?m)^commit: \S+`,
			`(?m)^target: ` + runtime.GOOS + `/` + runtime.GOARCH + `$`,
			`(?m)^go-sdk: ` + regexp.QuoteMeta(string(m[1])) + `$`,
			`(?m)^go: go1\.\S+ \w+/\w+$`,
			`(?m)^MCP protocol versions served to clients: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05$`,
			`(?m)^MCP protocol version asked of upstreams: ` + regexp.QuoteMeta(upstream.DefaultProtocolVersion) + ` `,
		} {
			if !regexp.MustCompile(re).Match(out) {
				t.Errorf("mcp-hub %s: output lacks %s:\n%s", strings.Join(args, " "), re, out)
			}
		}
	}
}

// TestVersionProtocols checks the versions --version lists against the
// hub: a client asking for one of them gets it, and a client asking for an
// unknown version gets the first (newest) of them.
func TestVersionProtocols(t *testing.T) {
	if !slices.IsSortedFunc(clientProtocolVersions, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("clientProtocolVersions %v: want newest first", clientProtocolVersions)
	}
	cfg := writeFile(t, "empty.yaml", "")
	for _, v := range append(slices.Clone(clientProtocolVersions), "2099-01-01") {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			c := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", t.TempDir())
			m := c.call("initialize", `{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"version-test","version":"1"}}`)
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if err := json.Unmarshal(m.Result, &r); err != nil {
				t.Fatalf("initialize: %v (%s)", err, m.Error)
			}
			want := v
			if !slices.Contains(clientProtocolVersions, v) {
				want = clientProtocolVersions[0]
			}
			if r.ProtocolVersion != want {
				t.Errorf("asked for %s, got %s; want %s", v, r.ProtocolVersion, want)
			}
			c.closeStdin(10 * time.Second)
		})
	}
}

// TestBadConfigExit runs the binary: a bad config exits 2 with the message on
// stderr and nothing on stdout.
func TestBadConfigExit(t *testing.T) {
	p := writeFile(t, "hub.yaml", "mcpServers:\n  a:\n    args: [x]\n")
	cmd := exec.Command(hubBin, "--config", p)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitConfig {
		t.Fatalf("exit = %v, want code %d", err, exitConfig)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
	if !strings.Contains(stderr.String(), p) || !strings.Contains(stderr.String(), "mcpServers.a.command") {
		t.Errorf("stderr = %q, want the file and key", stderr.String())
	}
}
