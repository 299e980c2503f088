// Command conformance-client drives the official MCP conformance suite's
// client scenarios through mcp-hub. The suite starts a scenario server and
// runs this program with the server's URL as the last argument; the program
// starts mcp-hub (from $CONFORMANCE_HUB_BIN) over stdio with that URL as its only
// upstream, connects to the hub with a go-sdk client, and does what the
// scenario ($MCP_CONFORMANCE_SCENARIO) expects of a client. The scenario
// server judges the hub, which is the client it sees.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("conformance-client: %v", err)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return errors.New("usage: conformance-client URL (with $CONFORMANCE_HUB_BIN and $MCP_CONFORMANCE_SCENARIO set)")
	}
	url := os.Args[len(os.Args)-1]
	hubBin := os.Getenv("CONFORMANCE_HUB_BIN")
	if hubBin == "" {
		return errors.New("$CONFORMANCE_HUB_BIN must name the mcp-hub binary")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	dir, err := os.MkdirTemp("", "conformance-client-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "servers:\n  scenario:\n    url: %q\n", url), 0o600); err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(hubBin, "--config", cfg, "--data-dir", filepath.Join(dir, "data"))
	cmd.Stderr = os.Stderr
	if path := os.Getenv("CONFORMANCE_HUB_LOG"); path != "" { // for debugging a scenario
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.Stderr = f
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub-conformance-client", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: acceptDefaults,
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("connect to the hub: %w", err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	has := func(name string) bool {
		return slices.ContainsFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == name })
	}
	call := func(name string, args map[string]any) error {
		if !has(name) {
			return fmt.Errorf("the hub does not list the scenario's tool %q", name)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", name, err)
		}
		if res.IsError {
			return fmt.Errorf("tools/call %s: the tool reported an error: %v", name, res.Content)
		}
		return nil
	}
	switch scenario {
	case "initialize":
		return nil // connecting and listing through the hub is the scenario
	case "tools_call":
		return call("add_numbers", map[string]any{"a": 5, "b": 3})
	case "sse-retry":
		return call("test_reconnection", map[string]any{})
	case "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", map[string]any{})
	default:
		return fmt.Errorf("unknown scenario %q", scenario)
	}
}

// acceptDefaults accepts an elicitation with every default the requested
// schema declares (SEP-1034: clients apply defaults for omitted fields).
func acceptDefaults(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	content := map[string]any{}
	if s := req.Params.RequestedSchema; s != nil {
		if schema, ok := s.(map[string]any); ok {
			if props, ok := schema["properties"].(map[string]any); ok {
				for name, p := range props {
					if prop, ok := p.(map[string]any); ok {
						if d, ok := prop["default"]; ok {
							content[name] = d
						}
					}
				}
			}
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}
