package persist

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Capabilities is what an upstream listed when the hub last synced it. Each
// list holds the raw JSON objects the upstream returned. A nil list means it
// was never listed (the upstream lacks the capability, or listing failed); an
// empty non-nil list means it was listed and came back empty.
type Capabilities struct {
	Tools             []json.RawMessage
	Resources         []json.RawMessage
	ResourceTemplates []json.RawMessage
	Prompts           []json.RawMessage
	ServerInfo        json.RawMessage // the initialize result's serverInfo
	SyncedAt          time.Time
	// Variants is a JSON object of what per-session instances listed that
	// the upstream's pins do not cover (upstream.Variants); nil for none.
	Variants json.RawMessage
}

type capRow struct {
	UpstreamID        string         `db:"upstream_id"`
	Tools             sql.NullString `db:"tools"`
	Resources         sql.NullString `db:"resources"`
	ResourceTemplates sql.NullString `db:"resource_templates"`
	Prompts           sql.NullString `db:"prompts"`
	ServerInfo        sql.NullString `db:"server_info"`
	LastSyncedAt      sql.NullString `db:"last_synced_at"`
	Variants          sql.NullString `db:"variants"`
}

func encodeList(l []json.RawMessage) (sql.NullString, error) {
	if l == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(l) // fails on an element that is not valid JSON
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

func decodeList(s sql.NullString) ([]json.RawMessage, error) {
	if !s.Valid {
		return nil, nil
	}
	l := []json.RawMessage{}
	if err := json.Unmarshal([]byte(s.String), &l); err != nil {
		return nil, err
	}
	return l, nil
}

// SaveCapabilities replaces what is stored for the named upstream. A zero
// SyncedAt means now. It returns an error wrapping [ErrNotFound] when the
// upstream is not registered.
func (s *Store) SaveCapabilities(ctx context.Context, name string, c Capabilities) error {
	if c.SyncedAt.IsZero() {
		c.SyncedAt = s.stamp()
	}
	row := capRow{LastSyncedAt: sql.NullString{String: formatTime(c.SyncedAt), Valid: true}}
	var err error
	for _, f := range []struct {
		what string
		dst  *sql.NullString
		l    []json.RawMessage
	}{
		{"tools", &row.Tools, c.Tools},
		{"resources", &row.Resources, c.Resources},
		{"resource templates", &row.ResourceTemplates, c.ResourceTemplates},
		{"prompts", &row.Prompts, c.Prompts},
	} {
		if *f.dst, err = encodeList(f.l); err != nil {
			return fmt.Errorf("save capabilities of %q: %s: %w", name, f.what, err)
		}
	}
	if len(c.ServerInfo) > 0 {
		b, err := json.Marshal(c.ServerInfo)
		if err != nil {
			return fmt.Errorf("save capabilities of %q: server info: %w", name, err)
		}
		row.ServerInfo = sql.NullString{String: string(b), Valid: true}
	}
	if len(c.Variants) > 0 {
		if !json.Valid(c.Variants) {
			return fmt.Errorf("save capabilities of %q: variants: not JSON", name)
		}
		row.Variants = sql.NullString{String: string(c.Variants), Valid: true}
	}
	return s.writeLocal(ctx, func(tx txx) error {
		err := tx.GetContext(ctx, &row.UpstreamID, "SELECT id FROM upstreams WHERE name = ?", name)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(name)
		}
		if err != nil {
			return fmt.Errorf("save capabilities of %q: %w", name, err)
		}
		_, err = tx.NamedExecContext(ctx, `INSERT INTO capabilities
			(upstream_id, tools, resources, resource_templates, prompts, server_info, last_synced_at, variants)
			VALUES (:upstream_id, :tools, :resources, :resource_templates, :prompts, :server_info, :last_synced_at, :variants)
			ON CONFLICT (upstream_id) DO UPDATE SET
			tools = excluded.tools, resources = excluded.resources,
			resource_templates = excluded.resource_templates, prompts = excluded.prompts,
			server_info = excluded.server_info, last_synced_at = excluded.last_synced_at,
			variants = excluded.variants`, row)
		if err != nil {
			return fmt.Errorf("save capabilities of %q: %w", name, err)
		}
		return nil
	})
}

func (row *capRow) capabilities() (Capabilities, error) {
	var c Capabilities
	var err error
	if c.Tools, err = decodeList(row.Tools); err != nil {
		return Capabilities{}, fmt.Errorf("tools: %w", err)
	}
	if c.Resources, err = decodeList(row.Resources); err != nil {
		return Capabilities{}, fmt.Errorf("resources: %w", err)
	}
	if c.ResourceTemplates, err = decodeList(row.ResourceTemplates); err != nil {
		return Capabilities{}, fmt.Errorf("resource templates: %w", err)
	}
	if c.Prompts, err = decodeList(row.Prompts); err != nil {
		return Capabilities{}, fmt.Errorf("prompts: %w", err)
	}
	if row.ServerInfo.Valid {
		c.ServerInfo = json.RawMessage(row.ServerInfo.String)
	}
	if row.Variants.Valid {
		c.Variants = json.RawMessage(row.Variants.String)
	}
	if row.LastSyncedAt.Valid {
		if c.SyncedAt, err = parseTime(row.LastSyncedAt.String); err != nil {
			return Capabilities{}, fmt.Errorf("last_synced_at: %w", err)
		}
	}
	return c, nil
}

// Capabilities returns what is stored for the named upstream: the zero
// Capabilities when it was never synced, an error wrapping [ErrNotFound]
// when it is not registered.
func (s *Store) Capabilities(ctx context.Context, name string) (Capabilities, error) {
	var row struct {
		Synced sql.NullString `db:"synced"`
		capRow
	}
	err := s.db.GetContext(ctx, &row, `SELECT u.id AS upstream_id, c.upstream_id AS synced,
		c.tools, c.resources, c.resource_templates, c.prompts, c.server_info, c.last_synced_at, c.variants
		FROM upstreams u LEFT JOIN capabilities c ON c.upstream_id = u.id
		WHERE u.name = ?`, name)
	if errors.Is(err, sql.ErrNoRows) {
		return Capabilities{}, notFound(name)
	}
	if err != nil {
		return Capabilities{}, fmt.Errorf("load capabilities of %q: %w", name, err)
	}
	if !row.Synced.Valid {
		return Capabilities{}, nil
	}
	c, err := row.capabilities()
	if err != nil {
		return Capabilities{}, fmt.Errorf("load capabilities of %q: %w", name, err)
	}
	return c, nil
}

// AllCapabilities returns the stored capabilities of every upstream that was
// synced at least once, by upstream name.
func (s *Store) AllCapabilities(ctx context.Context) (map[string]Capabilities, error) {
	var rows []struct {
		Name string `db:"name"`
		capRow
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT u.name, c.upstream_id,
		c.tools, c.resources, c.resource_templates, c.prompts, c.server_info, c.last_synced_at, c.variants
		FROM capabilities c JOIN upstreams u ON u.id = c.upstream_id`)
	if err != nil {
		return nil, fmt.Errorf("load capabilities: %w", err)
	}
	out := make(map[string]Capabilities, len(rows))
	for i := range rows {
		c, err := rows[i].capabilities()
		if err != nil {
			return nil, fmt.Errorf("load capabilities of %q: %w", rows[i].Name, err)
		}
		out[rows[i].Name] = c
	}
	return out, nil
}
