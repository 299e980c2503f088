package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// npmPackage returns the path of an installed test npm package's file, or
// fails with how to install them (make test does it).
func npmPackage(t *testing.T, rel string) string {
	t.Helper()
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".cache", "npm", "node_modules", rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("MCP_HUB_SKIP_NPM") == "1" {
			t.Skipf("npm test packages not installed (MCP_HUB_SKIP_NPM=1): %v", err)
		}
		t.Fatalf("npm test packages not installed (%v): run ./scripts/npm-deps.sh or make test", err)
	}
	return p
}

// TestInteropServerEverything puts the reference TypeScript server behind the
// hub: its tools answer through the hub exactly as they answer directly.
func TestInteropServerEverything(t *testing.T) {
	everything := npmPackage(t, "@modelcontextprotocol/server-everything/dist/index.js")
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf(`
mcpServers:
  everything:
    command: node
    args: [%q, "stdio"]
`, everything))
	hub := startRaw(t, nil, hubBin, "--config", cfg, "--data-dir", t.TempDir())
	hub.initialize()
	names := toolNames(t, hub.call("tools/list", "").Result)
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "get-structured-content"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools through the hub lack %q: %v", want, names)
		}
	}

	direct := startRaw(t, nil, "node", everything, "stdio")
	direct.initialize()
	for _, c := range []struct{ name, args string }{
		{"echo", `{"message":"hello through the hub ✓"}`},
		{"get-sum", `{"a":40,"b":2}`},
		{"get-tiny-image", `{}`},
		{"get-structured-content", `{"location":"New York"}`},
	} {
		params := `{"name":"` + c.name + `","arguments":` + c.args + `}`
		viaHub := hub.call("tools/call", params)
		straight := direct.call("tools/call", params)
		if string(viaHub.Result) != string(straight.Result) || string(viaHub.Error) != string(straight.Error) {
			t.Errorf("%s through the hub:\n%s%s\ndirect:\n%s%s", c.name, viaHub.Result, viaHub.Error, straight.Result, straight.Error)
		}
	}
}
