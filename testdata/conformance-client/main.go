// Command conformance-client drives the official MCP conformance suite's
// client scenarios through mcp-hub. The suite starts a scenario server and
// runs this program with the server's URL as the last argument; the program
// starts mcp-hub (from $CONFORMANCE_HUB_BIN) over stdio with that URL as its only
// upstream, connects to the hub with a go-sdk client, and does what the
// scenario ($MCP_CONFORMANCE_SCENARIO) expects of a client. The scenario
// server judges the hub, which is the client it sees.
//
// For the auth/* scenarios the hub is configured with the scenario's URL
// and an OAuth section (the client id metadata document URL the suite
// expects, and the pre-registered credentials it passes in
// $MCP_CONFORMANCE_CONTEXT), then logged in with "mcp-hub login" whose
// $BROWSER is this program's -browse mode (a browser that follows the
// authorization server's redirects to the hub's loopback listener). The
// go-sdk client declares URL-mode elicitation and opens what the hub asks
// for the same way, which is how the hub re-authorizes while it serves
// (scope step-up).
//
//	conformance-client -browse URL   GET URL following redirects; exit 1
//	                                 unless the last answer is 2xx
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-browse" {
		if err := browse(os.Args[2]); err != nil {
			log.Fatalf("conformance-client -browse: %v", err)
		}
		return
	}
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
	yaml := fmt.Sprintf("servers:\n  scenario:\n    url: %q\n", url)
	isAuth := strings.HasPrefix(scenario, "auth/")
	var env []string
	if isAuth {
		yaml += "    oauth:\n      clientMetadataUrl: https://conformance-test.local/client-metadata.json\n"
		var cc struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
		}
		if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
			_ = json.Unmarshal([]byte(c), &cc)
		}
		if cc.ClientID != "" {
			yaml += fmt.Sprintf("      clientId: %q\n", cc.ClientID)
			if cc.ClientSecret != "" {
				yaml += "      clientSecret: \"${CONFORMANCE_CLIENT_SECRET}\"\n"
				env = append(env, "CONFORMANCE_CLIENT_SECRET="+cc.ClientSecret)
			}
		}
	}
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return err
	}
	hubArgs := []string{"--config", cfg, "--data-dir", filepath.Join(dir, "data")}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if isAuth {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		login := exec.CommandContext(ctx, hubBin, append([]string{"login", "scenario", "--timeout", "20s"}, hubArgs...)...)
		login.Env = append(os.Environ(), append(env, "BROWSER="+self+" -browse")...)
		login.Stdout, login.Stderr = os.Stderr, os.Stderr
		if err := login.Run(); err != nil {
			return fmt.Errorf("mcp-hub login: %w", err)
		}
	}
	cmd := exec.Command(hubBin, hubArgs...)
	cmd.Env = append(os.Environ(), env...)
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
		ElicitationHandler: elicit,
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
			Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
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
	case "initialize", "request-metadata", "json-schema-ref-no-deref":
		return nil // connecting and listing through the hub is the scenario
	case "tools_call":
		return call("add_numbers", map[string]any{"a": 5, "b": 3})
	case "sse-retry":
		return call("test_reconnection", map[string]any{})
	case "elicitation-sep1034-client-defaults":
		return call("test_client_elicitation_defaults", map[string]any{})
	case "sep-2322-client-request-state":
		// The hub answers the server's input requests (asking this
		// client) and calls again with the answers and the state.
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			if err := call(name, map[string]any{}); err != nil {
				return err
			}
		}
		return nil
	case "http-standard-headers":
		// A tools/call, a resources/read and a prompts/get, so each
		// standard header is seen.
		if err := call("test_headers", map[string]any{}); err != nil {
			return err
		}
		res, err := cs.ListResources(ctx, nil)
		if err != nil || len(res.Resources) == 0 {
			return fmt.Errorf("resources/list: %v (%d resources)", err, len(res.Resources))
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI}); err != nil {
			return fmt.Errorf("resources/read: %w", err)
		}
		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil || len(prompts.Prompts) == 0 {
			return fmt.Errorf("prompts/list: %v", err)
		}
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompts.Prompts[0].Name}); err != nil {
			return fmt.Errorf("prompts/get: %w", err)
		}
		return nil
	case "http-custom-headers":
		// The calls the scenario asks for, with its arguments.
		var sc struct {
			ToolCalls []struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			} `json:"toolCalls"`
		}
		if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc); err != nil || len(sc.ToolCalls) == 0 {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT names no tool calls: %v", err)
		}
		for _, tc := range sc.ToolCalls {
			if err := call(tc.Name, tc.Arguments); err != nil {
				return err
			}
		}
		return nil
	case "http-invalid-tool-headers":
		// The hub leaves out the tools whose header annotations are
		// invalid; the valid one works.
		for _, tool := range tools.Tools {
			if strings.HasPrefix(tool.Name, "invalid_") {
				return fmt.Errorf("the hub lists %q, whose x-mcp-header annotation is invalid", tool.Name)
			}
		}
		return call("valid_tool", map[string]any{"region": "us-west1"})
	case "json-schema-2020-12-preservation":
		// Hand the schema the hub listed back to the scenario's echo tool.
		for _, tool := range tools.Tools {
			if tool.Name == "json_schema_2020_12_tool" {
				return call("json_schema_echo", map[string]any{"schema": tool.InputSchema})
			}
		}
		return errors.New("the hub does not list json_schema_2020_12_tool")
	case "":
	default:
		if isAuth {
			return call("test-tool", map[string]any{}) // listing it needed a login
		}
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// elicit opens the URL of a URL-mode elicitation (the hub asking for a
// login) the way a browser would, and answers a form elicitation with its
// defaults.
func elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if req.Params.Mode == "url" {
		go func() {
			if err := browse(req.Params.URL); err != nil {
				log.Printf("conformance-client: open the login page: %v", err)
			}
		}()
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	return acceptDefaults(ctx, req)
}

// browse is a browser that follows redirects and reports whether the last
// page answered 2xx.
func browse(u string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", resp.Request.URL.Redacted(), resp.Status)
	}
	return nil
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
