package hub

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 26: a server whose name sorts first takes over a tool name another
// server serves (the first server by name wins). Every approval prompt
// says so: the REST API's view and elicitation here (the CLI's and the
// console's print hub.ApprovalPrompt with the same note, tested in their
// packages). Before it ever ran, the prompt names what it would take over
// if it lists those names; once its listing is known, exactly what it
// takes over. The old prompts said nothing of it.
func TestApprovalPromptsNameTakeovers(t *testing.T) {
	h, srv := startHTTPHub(t, nil)
	api := srv.URL + "/api/servers"
	if code, out := apiJSON(t, "POST", api, map[string]any{"name": "zgood", "command": fixture, "args": []string{"-only", "echo,add"}}); code != 201 {
		t.Fatalf("add zgood: %d %v", code, out)
	}
	apiApprove(t, api, "zgood")
	eventually(t, 10*time.Second, "zgood's listing in the store", func() bool {
		invs, _ := h.opts.Store.Inventories(context.Background())
		return len(invs["zgood"].Tools) == 2
	})

	// Registered by a client, asked by elicitation: it never ran.
	var mu sync.Mutex
	var asked []string
	admin := sdkSession(t, srv.URL, false, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	if text, isErr := toolCall(t, admin, "hub_add_server", map[string]any{"name": "agood", "command": fixture, "args": []string{"-only", "echo"}}); isErr {
		t.Fatalf("hub_add_server: %s", text)
	}
	mu.Lock()
	prompt := strings.Join(asked, "\n")
	mu.Unlock()
	unknown := "It has not listed its tools yet. A tool it lists under one of these names takes it over: `add` from `zgood`, `echo` from `zgood`"
	if !strings.Contains(prompt, unknown) {
		t.Errorf("the elicitation prompt does not name the takeovers:\n%s", prompt)
	}

	// Registered over REST: POST's answer (it had no note) and GET show
	// the same.
	code, got := apiJSON(t, "POST", api, map[string]any{"name": "agood", "command": fixture, "args": []string{"-only", "echo"}})
	if code != 201 {
		t.Fatalf("add agood: %d %v", code, got)
	}
	if note, _ := got["takeover"].(string); !strings.Contains(note, unknown) || !strings.Contains(fmt.Sprint(got["message"]), unknown) {
		t.Errorf("POST agood: takeover %q\n%s", got["takeover"], got["message"])
	}
	_, got = apiJSON(t, "GET", api+"/agood", nil)
	if note, _ := got["takeover"].(string); !strings.Contains(note, unknown) || !strings.Contains(fmt.Sprint(got["message"]), unknown) {
		t.Errorf("GET agood: takeover %q\n%s", got["takeover"], got["message"])
	}

	// Approved, it takes echo over; changed, it waits again, and its
	// listing is known: exactly what it takes over.
	apiApprove(t, api, "agood")
	eventually(t, 10*time.Second, "agood's listing in the store", func() bool {
		invs, _ := h.opts.Store.Inventories(context.Background())
		return len(invs["agood"].Tools) == 1
	})
	if code, got = apiJSON(t, "PUT", api+"/agood", map[string]any{"args": []string{"-only", "echo", "-dummy", "1"}}); code != 200 {
		t.Fatalf("PUT agood: %d %v", code, got)
	}
	if note, _ := got["takeover"].(string); !strings.Contains(note, "Approving it takes over `echo` from `zgood` (by its last listing") {
		t.Errorf("PUT agood: takeover %q", got["takeover"])
	}
	_, got = apiJSON(t, "GET", api+"/agood", nil)
	if note, _ := got["takeover"].(string); !strings.Contains(note, "Approving it takes over `echo` from `zgood` (by its last listing") {
		t.Errorf("GET agood after the change: takeover %q", got["takeover"])
	}
	// A server that sorts last takes nothing over: no note.
	if code, got = apiJSON(t, "POST", api, map[string]any{"name": "zzz", "command": fixture, "args": []string{"-only", "echo"}}); code != 201 || got["takeover"] != nil {
		t.Fatalf("add zzz: %d %v", code, got)
	}
	if _, got = apiJSON(t, "GET", api+"/zzz", nil); got["takeover"] != nil {
		t.Errorf("GET zzz: takeover %q, want none", got["takeover"])
	}
}
