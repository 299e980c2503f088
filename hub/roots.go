package hub

import (
	"context"
	"encoding/json"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// An upstream's roots/list. Forwarded to the client session it is for when
// one can answer (route.go): the session whose call it serves, or the
// session a per-session instance belongs to. Otherwise the hub answers
// itself, with the roots configured for the server (its spec's Roots) or
// an empty list, never an error: many servers ask once when they start,
// while no session waits on them, and show a refusal as a failure (the
// filesystem server logs "Failed to request initial roots from client"
// while it works). A server whose spec forbids roots (allowRoots: false)
// was not told the hub has them and is refused as before.

// rootsAllowed reports whether up may be given roots.
func rootsAllowed(up *upstream.Upstream) bool {
	spec := up.Spec()
	return spec.AllowRoots == nil || *spec.AllowRoots
}

// answerRoots answers the roots/list id of the connection c of up with
// up's configured roots. why is logged: what no session could answer.
func (h *Hub) answerRoots(c *upstream.Conn, up *upstream.Upstream, id []byte, why string) {
	h.logger.Debug("upstream roots/list answered by the hub", "upstream", c.Name(), "roots", len(up.Spec().Roots), "why", why)
	_ = c.Respond(context.Background(), id, configuredRoots(up), nil)
}

// configuredRoots is a roots/list result of up's configured roots. A
// 2026-07-28 upstream asks for roots in an input_required result: the hub
// answers that from them too, for a client that has no roots (mrtr.go).
func configuredRoots(up *upstream.Upstream) []byte {
	spec := up.Spec()
	result, err := json.Marshal(struct {
		Roots []upstream.Root `json:"roots"`
	}{spec.RootList()})
	if err != nil { // cannot happen: roots are strings
		result = []byte(`{"roots":[]}`)
	}
	return result
}
