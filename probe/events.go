package probe

import (
	"context"
	"encoding/json"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// events answers what an upstream asks while it is probed, declared the
// capabilities a hub declares (hub.ClientCapabilities): roots/list gets
// the roots configured for it, else none, as a hub answers a request no
// client session waits for (the filesystem server asks when it starts);
// sampling and elicitation are refused, as no client is there to ask.
type events struct {
	mgr *upstream.Manager // set once the manager exists
}

func (*events) Notification(*upstream.Conn, string, []byte, []byte) {}

func (e *events) Request(c *upstream.Conn, id []byte, method string, _, _ []byte) {
	if method == "roots/list" {
		if u, ok := e.mgr.Get(c.Name()); ok {
			if spec := u.Spec(); spec.AllowRoots == nil || *spec.AllowRoots {
				result, err := json.Marshal(struct {
					Roots []upstream.Root `json:"roots"`
				}{spec.RootList()})
				if err == nil {
					_ = c.Respond(context.Background(), id, result, nil)
					return
				}
			}
		}
	}
	_ = c.Respond(context.Background(), id, nil, wire.AppendErrorBody(nil, -32601,
		"mcp-hub is only listing this server's tools (mcp-hub tools or doctor): no client is there to answer "+method, nil))
}
