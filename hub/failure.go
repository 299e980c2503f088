package hub

import (
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// A call that cannot be served because an upstream failed says which one
// and why, with the hints mcp-hub doctor gives (upstream.Hints), instead of
// only "unknown tool".

// maxFailuresNamed bounds how many failed upstreams an unknown-tool answer
// names.
const maxFailuresNamed = 3

// failureText says why up cannot serve: it failed to start, the error and
// the hints; "" when it has not failed.
func failureText(up *upstream.Upstream) string {
	st := up.Status()
	if st.State != upstream.StateFailed {
		return ""
	}
	msg := fmt.Sprintf("MCP server %q failed to start: %s", up.Name(), st.LastError)
	if hs := up.Hints(); len(hs) > 0 {
		msg += "; hint: " + strings.Join(hs, "; ")
	}
	return redact.Text(msg + " (see mcp-hub doctor)")
}

// unknownToolText is the answer to a call of a tool no upstream offers:
// when upstreams failed, the tool may be theirs, and the answer says why
// they failed.
func (h *Hub) unknownToolText(name string) string {
	msg := fmt.Sprintf("unknown tool: %q", name)
	var failed []string
	for _, u := range h.mgr.List() {
		if t := failureText(u); t != "" {
			failed = append(failed, t)
		}
	}
	switch {
	case len(failed) == 0:
		return msg
	case len(failed) > maxFailuresNamed:
		failed = append(failed[:maxFailuresNamed], fmt.Sprintf("%d more failed", len(failed)-maxFailuresNamed))
	}
	return msg + "; it may belong to a server that failed: " + strings.Join(failed, "; ")
}
