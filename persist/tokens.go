package persist

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// The OAuth tokens of HTTP upstreams (migration 0006). Store implements
// upstream.TokenStore.

var _ upstream.TokenStore = (*Store)(nil)

type tokenRow struct {
	Upstream      string `db:"upstream"`
	Resource      string `db:"resource"`
	AccessToken   string `db:"access_token"`
	RefreshToken  string `db:"refresh_token"`
	TokenType     string `db:"token_type"`
	Expiry        string `db:"expiry"`
	Scopes        string `db:"scopes"`
	Issuer        string `db:"issuer"`
	TokenURL      string `db:"token_url"`
	AuthStyle     int    `db:"auth_style"`
	ClientID      string `db:"client_id"`
	ClientSecret  string `db:"client_secret"`
	RevocationURL string `db:"revocation_url"`
	Pasted        bool   `db:"pasted"`
	UpdatedAt     string `db:"updated_at"`
}

const tokenCols = `upstream, resource, access_token, refresh_token, token_type, expiry, scopes, issuer,
	token_url, auth_style, client_id, client_secret, revocation_url, pasted, updated_at`

func (r *tokenRow) token() (upstream.Token, error) {
	exp, err1 := parseTime(r.Expiry)
	upd, err2 := parseTime(r.UpdatedAt)
	if err := errors.Join(err1, err2); err != nil {
		return upstream.Token{}, fmt.Errorf("token of %q: %w", r.Upstream, err)
	}
	return upstream.Token{
		Upstream: r.Upstream, Resource: r.Resource, AccessToken: r.AccessToken, RefreshToken: r.RefreshToken,
		TokenType: r.TokenType, Expiry: exp, Scopes: strings.Fields(r.Scopes), Issuer: r.Issuer,
		TokenURL: r.TokenURL, AuthStyle: r.AuthStyle, ClientID: r.ClientID, ClientSecret: r.ClientSecret,
		RevocationURL: r.RevocationURL, Pasted: r.Pasted, Updated: upd,
	}, nil
}

// Token returns the stored OAuth token of the named upstream, or an error
// wrapping upstream.ErrNoToken.
func (s *Store) Token(ctx context.Context, name string) (upstream.Token, error) {
	var row tokenRow
	err := s.db.GetContext(ctx, &row, "SELECT "+tokenCols+" FROM oauth_tokens WHERE upstream = ?", name)
	if errors.Is(err, sql.ErrNoRows) {
		return upstream.Token{}, fmt.Errorf("upstream %q: %w", name, upstream.ErrNoToken)
	}
	if err != nil {
		return upstream.Token{}, fmt.Errorf("read the token of %q: %w", name, err)
	}
	return row.token()
}

// Tokens returns every stored token, by upstream name (for status lines:
// callers show [upstream.Token.Status], never the token).
func (s *Store) Tokens(ctx context.Context) (map[string]upstream.Token, error) {
	var rows []tokenRow
	if err := s.db.SelectContext(ctx, &rows, "SELECT "+tokenCols+" FROM oauth_tokens"); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := make(map[string]upstream.Token, len(rows))
	for _, r := range rows {
		t, err := r.token()
		if err != nil {
			return nil, err
		}
		out[t.Upstream] = t
	}
	return out, nil
}

// SaveToken stores t as its upstream's token, replacing the one before.
// Updated is set to now.
func (s *Store) SaveToken(ctx context.Context, t upstream.Token) error {
	if t.Upstream == "" || t.AccessToken == "" {
		return errors.New("save token: upstream and access token are required")
	}
	exp := ""
	if !t.Expiry.IsZero() {
		exp = formatTime(t.Expiry)
	}
	return s.write(ctx, func(tx txx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO oauth_tokens (`+tokenCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (upstream) DO UPDATE SET
			resource = excluded.resource, access_token = excluded.access_token,
			refresh_token = excluded.refresh_token, token_type = excluded.token_type,
			expiry = excluded.expiry, scopes = excluded.scopes, issuer = excluded.issuer,
			token_url = excluded.token_url, auth_style = excluded.auth_style,
			client_id = excluded.client_id, client_secret = excluded.client_secret,
			revocation_url = excluded.revocation_url, pasted = excluded.pasted,
			updated_at = excluded.updated_at`,
			t.Upstream, t.Resource, t.AccessToken, t.RefreshToken, t.TokenType, exp, strings.Join(t.Scopes, " "),
			t.Issuer, t.TokenURL, t.AuthStyle, t.ClientID, t.ClientSecret, t.RevocationURL, t.Pasted,
			formatTime(s.stamp()))
		if err != nil {
			// The error names no value: go-sqlite3 does not quote arguments.
			return fmt.Errorf("save the token of %q: %w", t.Upstream, err)
		}
		return nil
	})
}

// DeleteToken forgets the named upstream's token. Deleting a token that is
// not there is not an error.
func (s *Store) DeleteToken(ctx context.Context, name string) error {
	return s.write(ctx, func(tx txx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM oauth_tokens WHERE upstream = ?", name); err != nil {
			return fmt.Errorf("delete the token of %q: %w", name, err)
		}
		return nil
	})
}
