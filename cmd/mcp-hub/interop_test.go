//lint:file-ignore SA1019 the test exercises sampling and roots, deprecated in 2026-07-28 but part of the protocol versions the hub serves.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

	// mcp-hub tools prints the catalog a client of the hub sees: the
	// server lists its sampling, elicitation and roots tools for it too,
	// as it does for the hub (it lists them by its client's capabilities).
	out, err := exec.Command(hubBin, "tools", "--json", "--config", cfg, "--data-dir", t.TempDir()).Output()
	if err != nil {
		t.Fatalf("mcp-hub tools: %v", err)
	}
	var printed struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(out, &printed); err != nil {
		t.Fatalf("mcp-hub tools --json: %v: %s", err, out)
	}
	var printedNames []string
	for _, tl := range printed.Tools {
		printedNames = append(printedNames, tl.Name)
	}
	slices.Sort(printedNames)
	if served := slices.Sorted(slices.Values(names)); !slices.Equal(printedNames, served) || !slices.Contains(served, "trigger-sampling-request") {
		t.Errorf("mcp-hub tools prints %v;\nthe hub serves %v", printedNames, served)
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

// TestInteropEverythingProtocol puts the reference server behind the hub and
// drives the rest of the protocol through it with a go-sdk client: progress
// of a long operation, resources and templates, prompts, completion, and the
// sampling, elicitation and roots requests the server sends while serving a
// call (its tools for them appear once it knows the client can answer).
func TestInteropEverythingProtocol(t *testing.T) {
	everything := npmPackage(t, "@modelcontextprotocol/server-everything/dist/index.js")
	cfg := writeFile(t, "hub.yaml", fmt.Sprintf("mcpServers:\n  everything:\n    command: node\n    args: [%q, \"stdio\"]\n", everything))
	var progress, elicited atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "interop-model", Content: &mcp.TextContent{Text: "sampled through the hub"}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited.Add(1)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	client.AddRoots(&mcp.Root{URI: "file:///interop-root", Name: "interop"})
	cmd := exec.Command(hubBin, "--config", cfg, "--data-dir", t.TempDir())
	cmd.Stderr = testLogWriter{t}
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitFor(t, 30*time.Second, "the server's sampling, elicitation and roots tools", func() bool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		n := 0
		for _, tl := range res.Tools {
			switch tl.Name {
			case "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list":
				n++
			}
		}
		return n == 3
	})
	text := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", name, res, err)
		}
		b, _ := json.Marshal(res.Content)
		return string(b)
	}

	p := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 3}}
	p.SetProgressToken("long-op")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	if progress.Load() == 0 {
		t.Error("no progress from the long-running operation")
	}
	if got := text("trigger-sampling-request", map[string]any{"prompt": "hello", "maxTokens": 10}); !strings.Contains(got, "sampled through the hub") {
		t.Errorf("sampling: %s", got)
	}
	text("trigger-elicitation-request", map[string]any{})
	if elicited.Load() != 1 {
		t.Errorf("the client saw %d elicitations, want 1", elicited.Load())
	}
	if got := text("get-roots-list", map[string]any{}); !strings.Contains(got, "file:///interop-root") {
		t.Errorf("roots: %s", got)
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/static/document/architecture.md"})
	if err != nil || len(read.Contents) == 0 || read.Contents[0].Text == "" {
		t.Errorf("read a static resource: %v %v", read, err)
	}
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://resource/dynamic/text/7"})
	if err != nil || len(read.Contents) == 0 {
		t.Errorf("read through a template: %v %v", read, err)
	}
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Lisbon"}})
	if err != nil || len(got.Messages) == 0 || !strings.Contains(fmt.Sprint(got.Messages[0].Content), "Lisbon") {
		t.Errorf("prompts/get: %v %v", got, err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: "E"},
	})
	if err != nil || len(comp.Completion.Values) == 0 {
		t.Errorf("completion: %v %v", comp, err)
	}
}
