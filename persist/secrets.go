package persist

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// secretSize is the size of a secret Secret creates, in bytes.
const secretSize = 32

// Secret returns the hub's secret of that name (migration 0010), creating
// a random one the first time: every hub sharing the store gets the same
// one (the first writer's; the others' inserts do nothing). It is never
// shown; the caller keys digests with it (package keyed).
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	if b, err := s.readSecret(ctx, name); err == nil || !errors.Is(err, sql.ErrNoRows) {
		return b, err
	}
	fresh := make([]byte, secretSize)
	_, _ = rand.Read(fresh)
	if err := s.writeLocal(ctx, func(tx txx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO hub_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
			name, hex.EncodeToString(fresh), formatTime(s.stamp()))
		return err
	}); err != nil {
		return nil, fmt.Errorf("store the hub's secret %q: %w", name, err)
	}
	return s.readSecret(ctx, name)
}

func (s *Store) readSecret(ctx context.Context, name string) ([]byte, error) {
	var v string
	err := s.db.GetContext(ctx, &v, "SELECT value FROM hub_secrets WHERE name = ?", name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read the hub's secret %q: %w", name, err)
	}
	b, err := hex.DecodeString(v)
	if err != nil || len(b) == 0 {
		return nil, fmt.Errorf("the hub's secret %q is damaged in the store", name)
	}
	return b, nil
}
