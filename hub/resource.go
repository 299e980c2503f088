package hub

import (
	"context"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
)

type tokenKey struct{}

// tokenInfo returns the verified bearer token of a request (the HTTP front
// as an OAuth resource server), or nil.
func tokenInfo(ctx context.Context) *sdkauth.TokenInfo {
	ti, _ := ctx.Value(tokenKey{}).(*sdkauth.TokenInfo)
	return ti
}
