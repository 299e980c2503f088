package probe

import "github.com/mcp-hub/mcp-hub/upstream"

// listedOnly shows a session-scoped upstream that connected and listed as
// connected: it stops its own process once listed (its sessions get
// instances of their own), which doctor and tools must not take for a
// failure.
func listedOnly(u *upstream.Upstream, st *upstream.Status) {
	if u.Scope() == upstream.ScopeSession && st.State == upstream.StateDisconnected && st.Idle && u.Inventory().Version > 0 {
		st.State = upstream.StateConnected
	}
}
