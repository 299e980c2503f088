package persist

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// SaveInventory stores an upstream's listed inventory as its capability
// cache (see SaveCapabilities).
func (s *Store) SaveInventory(ctx context.Context, name string, inv upstream.Inventory) error {
	var variants json.RawMessage
	if v := inv.Variants; v != nil && (len(v.Tools) > 0 || len(v.Prompts) > 0 || len(v.Templates) > 0) {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("save capabilities of %q: variants: %w", name, err)
		}
		variants = b
	}
	return s.SaveCapabilities(ctx, name, Capabilities{
		Variants:          variants,
		Tools:             orEmpty(inv.Tools),
		Resources:         inv.Resources,
		ResourceTemplates: inv.Templates,
		Prompts:           inv.Prompts,
		ServerInfo:        inv.ServerInfo,
		SyncedAt:          inv.SyncedAt,
	})
}

func orEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// Inventories returns the cached inventory of every upstream that was ever
// listed, by name, marked Stale.
func (s *Store) Inventories(ctx context.Context) (map[string]upstream.Inventory, error) {
	all, err := s.AllCapabilities(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]upstream.Inventory, len(all))
	for name, c := range all {
		if c.Tools == nil && c.Prompts == nil && c.Resources == nil && c.ResourceTemplates == nil {
			continue
		}
		inv := upstream.Inventory{
			Tools: c.Tools, Prompts: c.Prompts, Resources: c.Resources, Templates: c.ResourceTemplates,
			ServerInfo: c.ServerInfo, SyncedAt: c.SyncedAt, Stale: true,
		}
		if len(c.Variants) > 0 {
			var v upstream.Variants
			if err := json.Unmarshal(c.Variants, &v); err != nil {
				return nil, fmt.Errorf("load capabilities of %q: variants: %w", name, err)
			}
			inv.Variants = &v
		}
		out[name] = inv
	}
	return out, nil
}

// StoredStatus is the last status a running hub reported for an upstream.
type StoredStatus struct {
	upstream.Status
	ReportedAt time.Time
	HubPID     int
}

type statusRow struct {
	Name       string `db:"name"`
	State      string `db:"state"`
	LastError  string `db:"last_error"`
	PID        int    `db:"pid"`
	Tools      int    `db:"tools"`
	Instances  int    `db:"instances"`
	Sessions   string `db:"instance_sessions"`
	Attempts   int    `db:"attempts"`
	Since      string `db:"since"`
	ReportedAt string `db:"reported_at"`
	HubPID     int    `db:"hub_pid"`
}

// SaveStatus records an upstream's current state, reported by this process.
// An unregistered upstream is ignored (it may have just been removed).
func (s *Store) SaveStatus(ctx context.Context, st upstream.Status) error {
	return s.writeLocal(ctx, func(tx txx) error {
		var id string
		err := tx.GetContext(ctx, &id, "SELECT id FROM upstreams WHERE name = ?", st.Name)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("save status of %q: %w", st.Name, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO upstream_status
			(upstream_id, state, last_error, pid, tools, instances, instance_sessions, attempts, since, reported_at, hub_pid)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (upstream_id) DO UPDATE SET
			state = excluded.state, last_error = excluded.last_error, pid = excluded.pid,
			tools = excluded.tools, instances = excluded.instances, instance_sessions = excluded.instance_sessions,
			attempts = excluded.attempts,
			since = excluded.since, reported_at = excluded.reported_at, hub_pid = excluded.hub_pid`,
			id, string(st.State), st.LastError, st.PID, st.Tools, st.Instances, strings.Join(st.Sessions, ","), st.Attempts,
			formatTime(st.Since), formatTime(s.stamp()), os.Getpid())
		if err != nil {
			return fmt.Errorf("save status of %q: %w", st.Name, err)
		}
		return nil
	})
}

// Statuses returns the last reported status of every upstream that has one,
// by name.
func (s *Store) Statuses(ctx context.Context) (map[string]StoredStatus, error) {
	var rows []statusRow
	err := s.db.SelectContext(ctx, &rows, `SELECT u.name, s.state, s.last_error, s.pid, s.tools, s.instances, s.instance_sessions, s.attempts,
		s.since, s.reported_at, s.hub_pid FROM upstream_status s JOIN upstreams u ON u.id = s.upstream_id`)
	if err != nil {
		return nil, fmt.Errorf("list statuses: %w", err)
	}
	out := make(map[string]StoredStatus, len(rows))
	for _, r := range rows {
		since, err1 := parseTime(r.Since)
		at, err2 := parseTime(r.ReportedAt)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("status of %q: %w", r.Name, err)
		}
		var sessions []string
		if r.Sessions != "" {
			sessions = strings.Split(r.Sessions, ",")
		}
		out[r.Name] = StoredStatus{
			Status: upstream.Status{Name: r.Name, State: upstream.State(r.State), LastError: r.LastError,
				PID: r.PID, Tools: r.Tools, Instances: r.Instances, Sessions: sessions, Attempts: r.Attempts, Since: since},
			ReportedAt: at, HubPID: r.HubPID,
		}
	}
	return out, nil
}
