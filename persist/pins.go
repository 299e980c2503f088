package persist

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

type pinRow struct {
	Upstream   string `db:"upstream"`
	Kind       string `db:"kind"`
	Name       string `db:"name"`
	Hash       string `db:"hash"`
	Definition string `db:"definition"`
	ApprovedBy string `db:"approved_by"`
	ApprovedAt string `db:"approved_at"`
}

// Pins returns the pins of every upstream that has any, by upstream name,
// each upstream's ordered by kind and name.
func (s *Store) Pins(ctx context.Context) (map[string][]upstream.Pin, error) {
	var rows []pinRow
	err := s.db.SelectContext(ctx, &rows, `SELECT u.name AS upstream, p.kind, p.name, p.hash, p.definition,
		p.approved_by, p.approved_at FROM pins p JOIN upstreams u ON u.id = p.upstream_id
		ORDER BY u.name, p.kind, p.name`)
	if err != nil {
		return nil, fmt.Errorf("read pins: %w", err)
	}
	out := map[string][]upstream.Pin{}
	for _, r := range rows {
		at, err := parseTime(r.ApprovedAt)
		if err != nil {
			return nil, fmt.Errorf("read pins of %q: approved_at: %w", r.Upstream, err)
		}
		out[r.Upstream] = append(out[r.Upstream], upstream.Pin{
			Kind: upstream.PinKind(r.Kind), Name: r.Name, Hash: r.Hash,
			Definition: json.RawMessage(r.Definition), ApprovedBy: r.ApprovedBy, ApprovedAt: at,
		})
	}
	return out, nil
}

// RecordPins stores rec's pins for the named upstream, appends each change
// to the pin history and writes rec's audit entry, all in one transaction:
// all of it is stored, or none. A change whose Prev is not the hash pinned
// now (someone else approved or re-pinned it meanwhile) aborts it with an
// error wrapping [upstream.ErrPinsChanged]; a Baseline for an upstream that
// has pins aborts with [upstream.ErrPinned]; an unknown upstream with
// [ErrNotFound].
func (s *Store) RecordPins(ctx context.Context, name string, rec upstream.PinRecord) error {
	if rec.Action == "" {
		return errors.New("record pins: empty action")
	}
	var detail sql.NullString
	if len(rec.Detail) > 0 {
		b, err := json.Marshal(rec.Detail) // validates and compacts
		if err != nil {
			return fmt.Errorf("record pins of %q: detail: %w", name, err)
		}
		detail = sql.NullString{String: string(b), Valid: true}
	}
	now := formatTime(s.stamp())
	return s.write(ctx, func(tx txx) error {
		var id string
		err := tx.GetContext(ctx, &id, "SELECT id FROM upstreams WHERE name = ?", name)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(name)
		}
		if err != nil {
			return fmt.Errorf("record pins of %q: %w", name, err)
		}
		if rec.Baseline {
			var n int
			if err := tx.GetContext(ctx, &n, "SELECT COUNT(*) FROM pins WHERE upstream_id = ?", id); err != nil {
				return fmt.Errorf("record pins of %q: %w", name, err)
			}
			if n > 0 {
				return fmt.Errorf("pins of %q: %w", name, upstream.ErrPinned)
			}
		}
		for _, c := range rec.Changes {
			p := c.Pin
			var cur string
			err := tx.GetContext(ctx, &cur, "SELECT hash FROM pins WHERE upstream_id = ? AND kind = ? AND name = ?", id, string(p.Kind), p.Name)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("record pins of %q: %w", name, err)
			}
			if cur != c.Prev {
				return fmt.Errorf("pin of %s %q of %q: %w", p.Kind, p.Name, name, upstream.ErrPinsChanged)
			}
			at := p.ApprovedAt
			if at.IsZero() {
				at = s.stamp()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO pins (upstream_id, kind, name, hash, definition, approved_by, approved_at)
				VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (upstream_id, kind, name) DO UPDATE SET hash = excluded.hash,
				definition = excluded.definition, approved_by = excluded.approved_by, approved_at = excluded.approved_at`,
				id, string(p.Kind), p.Name, p.Hash, string(p.Definition), p.ApprovedBy, formatTime(at)); err != nil {
				return fmt.Errorf("record pin of %s %q of %q: %w", p.Kind, p.Name, name, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO pin_history (at, upstream, kind, name, old_hash, new_hash, actor, action)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, now, name, string(p.Kind), p.Name, c.Prev, p.Hash, rec.Actor, rec.Action); err != nil {
				return fmt.Errorf("record pin history of %q: %w", name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (at, actor, action, upstream, detail) VALUES (?, ?, ?, ?, ?)`,
			now, rec.Actor, rec.Action, name, detail); err != nil {
			return fmt.Errorf("audit %s %q: %w", rec.Action, name, err)
		}
		return nil
	})
}

// PinEvent is one row of the pin history.
type PinEvent struct {
	At       time.Time
	Upstream string
	Kind     upstream.PinKind
	Name     string
	// OldHash is "" for a first pin.
	OldHash, NewHash string
	Actor, Action    string
}

// PinHistory returns every pin change of the named upstream (of every
// upstream when name is ""), oldest first. It outlives the upstream's
// registration.
func (s *Store) PinHistory(ctx context.Context, name string) ([]PinEvent, error) {
	var rows []struct {
		At       string `db:"at"`
		Upstream string `db:"upstream"`
		Kind     string `db:"kind"`
		Name     string `db:"name"`
		OldHash  string `db:"old_hash"`
		NewHash  string `db:"new_hash"`
		Actor    string `db:"actor"`
		Action   string `db:"action"`
	}
	where, args := "", []any{}
	if name != "" {
		where, args = "WHERE upstream = ?", []any{name}
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT at, upstream, kind, name, old_hash, new_hash, actor, action
		FROM pin_history `+where+` ORDER BY id`, args...); err != nil {
		return nil, fmt.Errorf("read pin history: %w", err)
	}
	out := make([]PinEvent, 0, len(rows))
	for _, r := range rows {
		at, err := parseTime(r.At)
		if err != nil {
			return nil, fmt.Errorf("read pin history: at: %w", err)
		}
		out = append(out, PinEvent{At: at, Upstream: r.Upstream, Kind: upstream.PinKind(r.Kind), Name: r.Name,
			OldHash: r.OldHash, NewHash: r.NewHash, Actor: r.Actor, Action: r.Action})
	}
	return out, nil
}
