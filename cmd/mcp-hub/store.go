package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/persist"
)

// hubStore adapts *persist.Store to hub.Store.
type hubStore struct{ *persist.Store }

var _ hub.Store = hubStore{}

// Audit implements hub.Store.
func (s hubStore) Audit(ctx context.Context, actor, action, upstream string, detail any) error {
	var raw json.RawMessage
	if detail != nil {
		b, err := json.Marshal(detail)
		if err != nil {
			return fmt.Errorf("audit detail: %w", err)
		}
		raw = b
	}
	return s.Store.Audit(ctx, persist.AuditEntry{Actor: actor, Action: action, Upstream: upstream, Detail: raw})
}

// openStore opens hub.db in the configured data dir (default: the user's
// data dir).
func openStore(ctx context.Context, cfg *Config) (*persist.Store, error) {
	dir := cfg.DataDir
	if dir == "" {
		d, err := persist.DefaultDir()
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		dir = d
	}
	st, err := persist.Open(ctx, dir, nil)
	if err != nil {
		return nil, fmt.Errorf("open the registration store: %w", err)
	}
	return st, nil
}
