package hub

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/keyed"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The digest a person's approval is bound to when they approve from
// outside the hub's process: the REST API (GET /api/servers/{name} gives
// it, POST …/approve takes it back) and the console (its forms carry it).
// mcp-hub approve and elicitation bind in-process, to the registration
// they showed (ApproveRegistration, ApproveToolChanges). The digest is
// keyed with the hub's secret (package keyed): the fingerprint it covers
// hashes secret values, and never leaves the hub itself.

// SecretStore is a [Store] that keeps secrets of the hub's own, one per
// store, so that every hub sharing the store (the replicas of a team hub)
// has the same (persist.Store does). A hub whose store is not one keys its
// digests with a secret of its process.
type SecretStore interface {
	Secret(ctx context.Context, name string) ([]byte, error)
}

// digestKey is the hub's key, read from the store once.
type digestKey struct {
	mu  sync.Mutex
	key *keyed.Key
}

func (h *Hub) digestKey(ctx context.Context) (*keyed.Key, error) {
	d := &h.digests
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.key != nil {
		return d.key, nil
	}
	ss, ok := h.opts.Store.(SecretStore)
	if !ok {
		d.key = keyed.Random()
		return d.key, nil
	}
	b, err := ss.Secret(ctx, keyed.SecretName)
	if err != nil {
		return nil, fmt.Errorf("read the hub's digest key: %w", err)
	}
	if d.key, err = keyed.New(b); err != nil {
		return nil, err
	}
	return d.key, nil
}

// ApprovalDigest returns the digest of what an approval would cover: r's
// launch spec when r is not nil (its fingerprint: all that decides what
// runs, secret values included) and the tool changes c (each item's new
// definition and the pin it replaces). Anything else changed gives another
// digest; two hubs give different digests of the same thing, and nobody
// without the hub's secret learns anything from one.
func (h *Hub) ApprovalDigest(ctx context.Context, name string, r *upstream.Registration, c ToolChanges) (string, error) {
	k, err := h.digestKey(ctx)
	if err != nil {
		return "", err
	}
	parts := []string{name}
	if r != nil {
		parts = append(parts, "spec", r.Spec.Fingerprint())
	}
	for _, f := range c.Findings {
		old := ""
		if f.Old != nil {
			old = f.Old.Hash
		}
		parts = append(parts, "item", string(f.Item.Kind), f.Item.Name, f.Item.Hash, old)
	}
	return k.Digest("mcp-hub approval v1", parts...), nil
}

// SameDigest compares a digest a person sent back with the current one.
func SameDigest(sent, current string) bool { return keyed.Equal(sent, current) }
