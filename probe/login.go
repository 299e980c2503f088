package probe

import "github.com/mcp-hub/mcp-hub/upstream"

// StatusNeedsLogin is the status of an upstream that answered with an
// OAuth challenge and has no usable token (issue 13).
const StatusNeedsLogin = "needs login"

// loginRow adds the login state to a diagnosis: an upstream in NEEDS_LOGIN
// is not a failure but waits for mcp-hub login.
func loginRow(row *Row, r *Result) {
	if r.Status.State == upstream.StateNeedsLogin {
		row.Status = StatusNeedsLogin
		row.Errors = nil
		row.Hints = []string{"log in with: mcp-hub login " + r.Spec.Name + " (or hub_connect_server from a client that supports URL elicitation)"}
	}
	if r.Auth != "" {
		row.Notes = append(row.Notes, "login: "+r.Auth)
	}
}
