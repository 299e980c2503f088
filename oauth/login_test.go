package oauth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The lead, running the conformance suite's client leg (auth/scope-retry-
// limit at 2026-07-28): "mcp-hub login: scenario: logged in, but the
// connection failed afterwards: initialize: calling "initialize": Missing
// MCP-Protocol-Version header". Login connects the way the hub does:
// server/discover with the header, initialize only when the server does not
// speak the stateless era. But a discover the server refused for want of
// authorization (401, 403 insufficient_scope) or whose authorization failed
// made go-sdk fall back to initialize as if the server spoke only the
// session era: a stateless-only server then refused the headerless
// initialize, which hid why the login failed, and a server that authorizes
// initialize was asked to authorize a second time (a second browser tab).
// Now a refused discover ends the attempt with its own reason, and a server
// that does not speak the stateless era still gets initialize.
func TestLoginNegotiatesTheEraAfterAuthorizing(t *testing.T) {
	// statelessOnly answers a request without MCP-Protocol-Version before
	// it looks at the token, as the suite's 2026-07-28 servers do.
	statelessOnly := func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if r.Header.Get("Mcp-Protocol-Version") != "" {
			return false
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}}`, cmp(msg.ID, "null"))
		return true
	}
	// neverEnough refuses every token for a scope it never gets.
	neverEnough := func(w http.ResponseWriter, r *http.Request, body []byte) bool {
		if statelessOnly(w, r, body) {
			return true
		}
		if r.Header.Get("Authorization") == "" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin", error_description="Scope upgrade will never succeed"`)
		writeJSONBody(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope"})
		return true
	}
	for _, tc := range []struct {
		name      string
		stateless bool // the server speaks only 2026-07-28
		before    func(http.ResponseWriter, *http.Request, []byte) bool
		refuse    bool   // the person (or the authorization server) says no
		wantErr   string // "" for a login that connects
		wantEra   string // the MCP-Protocol-Version of the requests after discover
	}{
		{name: "stateless server", stateless: true, before: statelessOnly, wantEra: "2026-07-28"},
		{name: "stateless server refusing every scope", stateless: true, before: neverEnough, wantErr: "insufficient_scope"},
		{name: "stateless server, authorization refused", stateless: true, before: statelessOnly, refuse: true, wantErr: "access_denied"},
		{name: "session server", wantEra: "2025-11-25"},
		{name: "session server, authorization refused", refuse: true, wantErr: "access_denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFlowServer(t, func(f *flowServer) {
				f.before, f.refuse = tc.before, tc.refuse
				h := mcpServer(tc.stateless)
				f.resource = func(w http.ResponseWriter, r *http.Request, _ []byte, _ []string) { h.ServeHTTP(w, r) }
			})
			st, err := persist.Open(t.Context(), t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			status, err := Login(t.Context(), upstream.Spec{Name: "web", URL: f.srv.URL + "/mcp"},
				LoginOptions{Store: st, Interact: browse, Timeout: 20 * time.Second, ClientName: "mcp-hub", ClientVersion: "test"})
			seen := f.seen()
			t.Logf("Login: %v; the server got %q", err, seen)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Login: %v (the server got %q)", err, seen)
			case tc.wantErr == "" && !status.LoggedIn:
				t.Errorf("status %+v, want logged in", status)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Login: %v, want an error saying %s", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "MCP-Protocol-Version") {
				t.Errorf("Login: %v: the reason is hidden behind a headerless initialize", err)
			}
			if got := f.authorizations(); len(got) != 1 {
				t.Errorf("%d authorizations (%q), want 1: the person is asked once", len(got), got)
			}
			if len(seen) == 0 || !strings.HasPrefix(seen[0], "server/discover 2026-07-28") {
				t.Fatalf("the server got %q, want server/discover with the header first", seen)
			}
			hasInit := slices.ContainsFunc(seen, func(s string) bool { return strings.HasPrefix(s, "initialize") })
			if hasInit != (tc.wantEra == "2025-11-25") {
				t.Errorf("the server got %q: initialize only for a session-era server that let the hub in", seen)
			}
			if tc.wantEra != "" && !slices.ContainsFunc(seen, func(s string) bool { return s == "tools/list "+tc.wantEra }) {
				t.Errorf("the server got %q, want tools/list at %s", seen, tc.wantEra)
			}
		})
	}
}

func cmp(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}
