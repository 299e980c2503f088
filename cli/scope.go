package cli

import "github.com/mcp-hub/mcp-hub/upstream"

// newScope gives a server registered at run time (mcp-hub import) the
// scope of new registrations, upstream.DefaultScope, unless its entry
// (raw, as config.DecodeServer read it) names one.
func newScope(raw any, spec *upstream.Spec) {
	if m, ok := raw.(map[string]any); ok {
		if _, named := m["scope"]; named {
			return
		}
	}
	spec.Scope = upstream.DefaultScope
}

// scopeUsage documents mcp-hub add's --scope.
const scopeUsage = "shared (one instance for every client session), session (one per client session) or auto (shared until the server asks a client something while several sessions wait on it)"
