package hub

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issue 26: in a hub that takes an identity provider's tokens, one user
// cannot push another user's sessions out: sessions are bounded per token
// subject, and a user at a cap replaces their own least recently used idle
// session first. On the old code alice's 70 sessions evicted bob's.
func TestHTTPSessionsBoundedPerSubject(t *testing.T) {
	rsa1 := newRSAKey(t, "rsa1")
	idp := newIdP(t, rsa1)
	authOpts := &AuthOptions{Issuer: idp.srv.URL, Audience: hubResource, RequiredScopes: []string{"mcp"}, JWKSMinRefresh: time.Hour}
	token := func(sub string) string { return idp.sign(t, rsa1, hubResource, jwt.MapClaims{"sub": sub}) }
	open := func(srv *httptest.Server, tok string) (string, int) {
		resp := raw(t, "POST", srv.URL+"/mcp", initBody, bearerHdr(tok))
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), resp.StatusCode
	}
	ping := func(srv *httptest.Server, tok, sid string) int {
		resp := raw(t, "POST", srv.URL+"/mcp", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, bearerHdr(tok, "Mcp-Session-Id", sid))
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}

	t.Run("per-subject cap", func(t *testing.T) {
		_, srv := startHTTPHubOpts(t, &Options{Approval: ApprovalAuto}, &HTTPOptions{Auth: authOpts, MaxSessions: 64},
			fixtureSpec("a", "-only", "echo"))
		alice, bob := token("alice"), token("bob")
		bobs, code := open(srv, bob)
		if code != 200 {
			t.Fatalf("bob's initialize: %d", code)
		}
		var alices []string
		for i := range 70 {
			sid, code := open(srv, alice)
			if code != 200 {
				t.Fatalf("alice's initialize %d: %d", i, code)
			}
			alices = append(alices, sid)
		}
		if code := ping(srv, bob, bobs); code != 200 {
			t.Fatalf("bob's idle session after alice opened 70: %d, want 200", code)
		}
		live := 0
		for _, sid := range alices {
			if ping(srv, alice, sid) == 200 {
				live++
			}
		}
		if live != 16 {
			t.Errorf("alice has %d live sessions, want 16 (64/4)", live)
		}
		if code := ping(srv, alice, alices[69]); code != 200 {
			t.Errorf("alice's newest session: %d", code)
		}
	})

	t.Run("own idle sessions first at the hub's cap", func(t *testing.T) {
		_, srv := startHTTPHubOpts(t, &Options{Approval: ApprovalAuto}, &HTTPOptions{Auth: authOpts, MaxSessions: 4, MaxSessionsPerSubject: 4},
			fixtureSpec("a", "-only", "echo"))
		alice, bob := token("alice"), token("bob")
		bobs, _ := open(srv, bob) // the least recently used of all
		var alices []string
		for range 4 {
			sid, code := open(srv, alice)
			if code != 200 {
				t.Fatalf("alice's initialize: %d", code)
			}
			alices = append(alices, sid)
		}
		if code := ping(srv, bob, bobs); code != 200 {
			t.Errorf("bob's session after alice filled the hub: %d, want 200 (alice's own idle session goes first)", code)
		}
		if code := ping(srv, alice, alices[0]); code != 404 {
			t.Errorf("alice's oldest session: %d, want 404 (replaced by her newest)", code)
		}
	})
}
