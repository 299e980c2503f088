// Package hubstore opens the hub's registration store in a data directory
// and adapts it to [hub.Store]: what a program needs, besides a
// configuration (package config), to run a hub with the registrations the
// mcp-hub command line and other hubs share.
//
// It sits between hub and persist, which do not know each other: hub
// declares the store it needs, persist implements the storage.
package hubstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/persist"
)

// Dir returns the data directory: dataDir, or the user's default data
// directory ([persist.DefaultDir]) when dataDir is "".
func Dir(dataDir string) (string, error) {
	if dataDir != "" {
		return dataDir, nil
	}
	return persist.DefaultDir()
}

// Path returns the path of the store's file (hub.db) in the data directory
// dataDir ("" for the default one).
func Path(dataDir string) (string, error) {
	dir, err := Dir(dataDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, persist.FileName), nil
}

// Open opens the store in the data directory dataDir ("" for the default
// one), creating it when missing.
func Open(ctx context.Context, dataDir string) (*persist.Store, error) {
	return OpenAt(ctx, "", dataDir)
}

// OpenAt opens the store the configuration names: location is the store
// key, resolved ("${VAR}" and "file:" already read): "" or "sqlite" for
// hub.db in the data directory dataDir ("" for the default one), or a
// postgres:// URL for a PostgreSQL database several hubs share.
func OpenAt(ctx context.Context, location, dataDir string) (*persist.Store, error) {
	var (
		st  *persist.Store
		err error
	)
	switch {
	case location == "" || strings.EqualFold(location, "sqlite"):
		dir, derr := Dir(dataDir)
		if derr != nil {
			return nil, fmt.Errorf("data dir: %w", derr)
		}
		st, err = persist.Open(ctx, dir, nil)
	case persist.SchemeOK(location):
		st, err = persist.OpenPostgres(ctx, location, nil)
	default:
		return nil, errors.New("open the registration store: store: want a postgres:// URL, or nothing for hub.db in the data directory")
	}
	if err != nil {
		return nil, fmt.Errorf("open the registration store: %w", err)
	}
	return st, nil
}

// Store is a [persist.Store] that is a [hub.Store].
type Store struct{ *persist.Store }

var _ hub.Store = Store{}

// Audit implements [hub.Store]: detail is marshalled to JSON.
func (s Store) Audit(ctx context.Context, actor, action, upstream string, detail any) error {
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
