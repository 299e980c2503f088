package hub

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issue 26: a token whose header lists extensions in crit (RFC 7515
// §4.1.11) is refused: the hub implements none, and must not accept a
// token whose issuer required one to be processed. The old code accepted
// it (golang-jwt ignores crit).
func TestResourceRefusesCrit(t *testing.T) {
	rsa1 := newRSAKey(t, "rsa1")
	idp := newIdP(t, rsa1)
	_, srv := startAuthHub(t, idp, nil, time.Hour, fixtureSpec("a", "-only", "echo"))
	sign := func(header map[string]any) string {
		now := time.Now()
		tok := jwt.NewWithClaims(rsa1.method, jwt.MapClaims{"iss": idp.srv.URL, "aud": hubResource, "sub": "alice", "scope": "mcp",
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		tok.Header["kid"] = rsa1.kid
		for k, v := range header {
			tok.Header[k] = v
		}
		s, err := tok.SignedString(rsa1.priv)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	list := statelessBody("1", "tools/list", "")
	for _, tt := range []struct {
		name   string
		header map[string]any
		status int
		want   string
	}{
		{"no crit", nil, 200, ""},
		{"unknown extension", map[string]any{"crit": []string{"x-policy"}, "x-policy": "strict"}, 401, "crit: x-policy"},
		{"b64", map[string]any{"crit": []string{"b64"}, "b64": false}, 401, "crit: b64"},
		{"empty list", map[string]any{"crit": []string{}}, 401, "malformed crit"},
		{"not a list", map[string]any{"crit": "x-policy", "x-policy": 1}, 401, "malformed crit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := raw(t, "POST", srv.URL+"/mcp", list, bearerHdr(sign(tt.header), "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"))
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tt.status, body)
			}
			if wa := resp.Header.Get("WWW-Authenticate"); tt.want != "" && (!strings.Contains(wa, `error="invalid_token"`) || !strings.Contains(wa, tt.want)) {
				t.Errorf("WWW-Authenticate %q, want invalid_token saying %q", wa, tt.want)
			}
		})
	}
}
