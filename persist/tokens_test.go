package persist

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Issue 13 item 4: tokens live in a table of their own; saving replaces,
// reading returns every field, deleting the token or the registration
// forgets it, and an upstream without one reports upstream.ErrNoToken.
func TestTokens(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		ctx := t.Context()
		s := newTestDB(t, d).open(t, nil)
		if _, err := s.Create(ctx, testRecord("web")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Token(ctx, "web"); !errors.Is(err, upstream.ErrNoToken) {
			t.Fatalf("Token before any: %v, want ErrNoToken", err)
		}
		exp := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
		want := upstream.Token{Upstream: "web", Resource: "https://h/mcp", AccessToken: "at-1", RefreshToken: "rt-1",
			TokenType: "Bearer", Expiry: exp, Scopes: []string{"a", "b"}, Issuer: "https://as", TokenURL: "https://as/token",
			AuthStyle: 2, ClientID: "cid", ClientSecret: "csec", RevocationURL: "https://as/revoke"}
		if err := s.SaveToken(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Token(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		if got.Updated.IsZero() {
			t.Error("Updated not set")
		}
		got.Updated = time.Time{}
		if !got.Expiry.Equal(want.Expiry) || !slices.Equal(got.Scopes, want.Scopes) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		got.Expiry, got.Scopes, want.Expiry, want.Scopes = time.Time{}, nil, time.Time{}, nil
		if got.Upstream != want.Upstream || got.AccessToken != want.AccessToken || got.RefreshToken != want.RefreshToken ||
			got.ClientSecret != want.ClientSecret || got.AuthStyle != want.AuthStyle || got.RevocationURL != want.RevocationURL ||
			got.Resource != want.Resource || got.TokenURL != want.TokenURL || got.Issuer != want.Issuer || got.ClientID != want.ClientID {
			t.Errorf("got %+v, want %+v", got, want)
		}

		// A pasted token without expiry replaces it.
		if err := s.SaveToken(ctx, upstream.Token{Upstream: "web", Resource: "https://h/mcp", AccessToken: "pasted", Pasted: true}); err != nil {
			t.Fatal(err)
		}
		all, err := s.Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p := all["web"]; len(all) != 1 || p.AccessToken != "pasted" || !p.Pasted || !p.Expiry.IsZero() || p.RefreshToken != "" {
			t.Errorf("after replace: %+v", all)
		}
		if err := s.DeleteToken(ctx, "web"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Token(ctx, "web"); !errors.Is(err, upstream.ErrNoToken) {
			t.Fatalf("Token after delete: %v", err)
		}
		if err := s.DeleteToken(ctx, "web"); err != nil {
			t.Errorf("deleting a missing token: %v", err)
		}

		// Removing the registration removes its token.
		if err := s.SaveToken(ctx, upstream.Token{Upstream: "web", Resource: "https://h/mcp", AccessToken: "again"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "web"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Token(ctx, "web"); !errors.Is(err, upstream.ErrNoToken) {
			t.Fatalf("Token after the registration was deleted: %v", err)
		}
	})
}
