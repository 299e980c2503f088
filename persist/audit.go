package persist

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	At time.Time // zero means now
	// Actor says who acted: "cli", "config", "admin:<client name>/<session>", …
	Actor string
	// Action says what was done: "add", "update", "remove", "approve",
	// "reject", …
	Action   string
	Upstream string // the upstream's name, if any
	// Detail is a JSON value with details. It must never hold secret values
	// (env or header values); it is stored and shown as is.
	Detail json.RawMessage
}

type auditRow struct {
	At       string         `db:"at"`
	Actor    string         `db:"actor"`
	Action   string         `db:"action"`
	Upstream string         `db:"upstream"`
	Detail   sql.NullString `db:"detail"`
}

// Audit appends e to the audit log.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	if e.Action == "" {
		return errors.New("audit: empty action")
	}
	if e.At.IsZero() {
		e.At = s.stamp()
	}
	row := auditRow{At: formatTime(e.At), Actor: e.Actor, Action: e.Action, Upstream: e.Upstream}
	if len(e.Detail) > 0 {
		b, err := json.Marshal(e.Detail) // validates and compacts
		if err != nil {
			return fmt.Errorf("audit %s %q: detail: %w", e.Action, e.Upstream, err)
		}
		row.Detail = sql.NullString{String: string(b), Valid: true}
	}
	return s.writeLocal(ctx, func(tx txx) error {
		_, err := tx.NamedExecContext(ctx, `INSERT INTO audit (at, actor, action, upstream, detail)
			VALUES (:at, :actor, :action, :upstream, :detail)`, row)
		if err != nil {
			return fmt.Errorf("audit %s %q: %w", e.Action, e.Upstream, err)
		}
		return nil
	})
}

// AuditLog returns the newest limit entries about the named upstream (all
// upstreams when upstream is ""), oldest first. A limit <= 0 means no limit.
func (s *Store) AuditLog(ctx context.Context, upstream string, limit int) ([]AuditEntry, error) {
	where, args := "", []any{}
	if upstream != "" {
		where, args = "WHERE upstream = ?", []any{upstream}
	}
	lim := ""
	if limit > 0 {
		lim, args = " LIMIT ?", append(args, limit)
	}
	var rows []auditRow
	err := s.db.SelectContext(ctx, &rows, `SELECT at, actor, action, upstream, detail FROM (
		SELECT id, at, actor, action, upstream, detail FROM audit `+where+` ORDER BY id DESC`+lim+`
		) AS newest ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	out := make([]AuditEntry, 0, len(rows))
	for _, r := range rows {
		at, err := parseTime(r.At)
		if err != nil {
			return nil, fmt.Errorf("read audit log: at: %w", err)
		}
		e := AuditEntry{At: at, Actor: r.Actor, Action: r.Action, Upstream: r.Upstream}
		if r.Detail.Valid {
			e.Detail = json.RawMessage(r.Detail.String)
		}
		out = append(out, e)
	}
	return out, nil
}
