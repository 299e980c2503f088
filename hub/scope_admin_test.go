//lint:file-ignore SA1019 the tests exercise sampling and roots, deprecated in 2026-07-28 but part of the protocol versions the hub serves.

package hub

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestScopeAdmin: the REST API (the hub_* tools' operations) registers a
// new server with scope auto unless told otherwise, shows the scope in the
// review, and a change of scope needs a person's approval again, as any
// change to what runs; GET then shows the per-session instances.
func TestScopeAdmin(t *testing.T) {
	_, srv := startHTTPHub(t, nil)
	api := srv.URL + "/api/servers"
	code, out := apiJSON(t, "POST", api, map[string]any{"name": "fx", "command": fixture, "args": []string{"-only", "counter"}})
	if review, _ := out["review"].(string); code != 201 || !strings.Contains(review, "(scope auto)") {
		t.Fatalf("POST: %d %v, want pending with scope auto in the review", code, out)
	}
	apiApprove(t, api, "fx")
	_, got := apiJSON(t, "GET", api+"/fx", nil)
	if v, _ := got["server"].(map[string]any); v["scope"] != "auto" || v["perSession"] != nil {
		t.Errorf("GET after approval: %v", v)
	}

	code, out = apiJSON(t, "PUT", api+"/fx", map[string]any{"scope": "session"})
	if review, _ := out["review"].(string); code != 200 || out["approval"] != "pending" || !strings.Contains(review, "one per client session (scope session)") {
		t.Fatalf("PUT scope session: %d %v, want pending again", code, out)
	}
	if code, out = apiJSON(t, "POST", api+"/fx/approve", reviewed(t, api, "fx")); code != 200 {
		t.Fatalf("approve: %d %v", code, out)
	}
	cs := sdkSession(t, srv.URL, false, nil)
	eventually(t, 20*time.Second, "the session-scoped server's tool", func() bool {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "counter"})
		return err == nil && !res.IsError
	})
	_, got = apiJSON(t, "GET", api+"/fx", nil)
	v, _ := got["server"].(map[string]any)
	insts, _ := v["instances"].([]any)
	if v["scope"] != "session" || v["perSession"] != true || len(insts) != 1 || !strings.Contains(fmt.Sprint(got["message"]), "one instance per client session, 1 running") {
		t.Errorf("GET with one session: %v", got)
	}

	if code, out = apiJSON(t, "PUT", api+"/fx", map[string]any{"scope": "per-user"}); code != 400 || !strings.Contains(fmt.Sprint(out["message"]), "scope") {
		t.Errorf("PUT an unknown scope: %d %v, want 400 naming scope", code, out)
	}
}

// TestScopeAdminTools: hub_add_server and hub_update_server take scope as
// the REST API does. A session-scoped server a client registered (the
// person approving it through elicitation sees the scope) gives each
// session its own counter; a change of scope asks the person again, with
// the new scope in the text, shared included; declined, nothing changes;
// approved, the sessions share one instance.
func TestScopeAdminTools(t *testing.T) {
	h, srv := startHTTPHub(t, nil)
	var (
		mu     sync.Mutex
		asked  []string
		answer = "accept"
	)
	admin := sdkSession(t, srv.URL, false, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: answer}, nil
		},
	})
	answerWith := func(a string) {
		mu.Lock()
		defer mu.Unlock()
		answer = a
	}
	lastAsked := func() (string, int) {
		mu.Lock()
		defer mu.Unlock()
		if len(asked) == 0 {
			return "", 0
		}
		return asked[len(asked)-1], len(asked)
	}
	if text, isErr := toolCall(t, admin, "hub_add_server", map[string]any{
		"name": "fx", "command": fixture, "args": []string{"-only", "counter"}, "scope": "session"}); isErr {
		t.Fatalf("hub_add_server: %s", text)
	}
	if msg, n := lastAsked(); n != 1 || !strings.Contains(msg, "instances: one per client session (scope session)") {
		t.Errorf("the approval asked (%d times): %s", n, msg)
	}
	waitTools(t, h, "counter")
	a, b := sdkSession(t, srv.URL, false, nil), sdkSession(t, srv.URL, true, nil)
	for i := 1; i <= 2; i++ {
		for _, cs := range []*mcp.ClientSession{a, b} {
			if got := callText(t, cs, "counter", nil); got != strconv.Itoa(i) {
				t.Errorf("call %d at scope session: counter = %s", i, got)
			}
		}
	}
	u, _ := h.Manager().Get("fx")
	if n := len(u.Instances()); n != 2 {
		t.Errorf("%d instances, want one per session that called", n)
	}

	answerWith("decline")
	if text, _ := toolCall(t, admin, "hub_update_server", map[string]any{"name": "fx", "scope": "shared"}); !strings.Contains(text, "declined") {
		t.Errorf("hub_update_server declined: %s", text)
	}
	if msg, n := lastAsked(); n != 2 || !strings.Contains(msg, "instances: one shared by every client session (scope shared)") {
		t.Errorf("the change's approval asked (%d times): %s", n, msg)
	}
	if got := callText(t, a, "counter", nil); got != "3" || u.Scope() != upstream.ScopeSession {
		t.Errorf("after a declined change: counter %s, scope %q; want A's instance, scope session", got, u.Scope())
	}

	answerWith("accept")
	if text, isErr := toolCall(t, admin, "hub_update_server", map[string]any{"name": "fx", "scope": "shared"}); isErr {
		t.Fatalf("hub_update_server: %s", text)
	}
	if _, n := lastAsked(); n != 3 {
		t.Errorf("the approval asked %d times, want 3", n)
	}
	eventually(t, 20*time.Second, "fx shared", func() bool {
		u, ok := h.Manager().Get("fx")
		return ok && u.Scope() == upstream.ScopeShared && len(u.Instances()) == 0 && u.Status().State == upstream.StateConnected
	})
	first, _ := strconv.Atoi(callText(t, a, "counter", nil))
	if got := callText(t, b, "counter", nil); got != strconv.Itoa(first+1) {
		t.Errorf("at scope shared: A counted %d, then B %s; want one counter", first, got)
	}
	if text, _ := toolCall(t, admin, "hub_get_server", map[string]any{"name": "fx"}); strings.Contains(text, "instance per client session") {
		t.Errorf("hub_get_server of a shared server: %s", text)
	}
}
