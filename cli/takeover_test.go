package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Issue 26: mcp-hub approve says which tool names approving a server
// takes over from the servers that serve them now (the first server by
// name wins), from the listings the store keeps. The old prompt did not.
func TestApproveNamesTakeovers(t *testing.T) {
	s := newSetup(t, "")
	s.register(t, "zgood", upstream.ApprovalApproved, "-only", "echo")
	s.register(t, "agood", upstream.ApprovalPending, "-only", "echo")
	st := s.store(t)
	if err := st.SaveInventory(context.Background(), "zgood", upstream.Inventory{Tools: []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)}}); err != nil {
		t.Fatal(err)
	}
	o := s.run(t, Approve, "approve", "agood")
	if !strings.Contains(o.stdout, "A tool it lists under one of these names takes it over: `echo` from `zgood`") {
		t.Errorf("approve agood, which never ran:\n%s", o.stdout)
	}
	if err := st.SaveInventory(context.Background(), "agood", upstream.Inventory{Tools: []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)}}); err != nil {
		t.Fatal(err)
	}
	o = s.run(t, Approve, "approve", "agood")
	if !strings.Contains(o.stdout, "Approving it takes over `echo` from `zgood`") {
		t.Errorf("approve agood, whose listing is known:\n%s", o.stdout)
	}
}
