package oauth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// TestStepUpScopeUnion: a step-up asks for the scopes the token had and
// the challenged ones (SEP-2350), the challenge's other parameters kept.
func TestStepUpScopeUnion(t *testing.T) {
	if got := unionScopes([]string{"mcp:basic", "mcp:read"}, "mcp:write mcp:read"); got != "mcp:basic mcp:read mcp:write" {
		t.Errorf("unionScopes = %q", got)
	}
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{}}
	resp.Header.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="https://x/.well-known/oauth-protected-resource"`)
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	got := withScope(resp, cs, unionScopes([]string{"mcp:basic"}, "mcp:write"))
	h := got.Header.Get("WWW-Authenticate")
	for _, want := range []string{`scope="mcp:basic mcp:write"`, `error="insufficient_scope"`, `resource_metadata="https://x/.well-known/oauth-protected-resource"`} {
		if !strings.Contains(h, want) {
			t.Errorf("challenge %q lacks %s", h, want)
		}
	}
	if resp.Header.Get("WWW-Authenticate") == h {
		t.Error("the original response was changed")
	}
	if same := withScope(resp, cs, "mcp:write"); same != resp {
		t.Error("an unchanged scope copied the response")
	}
}
