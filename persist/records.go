package persist

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// The record types are upstream's, so the hub can use them without
// importing persist.
type (
	// Source says who registered an upstream.
	Source = upstream.Source
	// Approval is the state of a person's approval of a launch spec.
	Approval = upstream.Approval
	// Record is one registered upstream.
	Record = upstream.Registration
)

// The sources and approval states.
const (
	SourceConfig     = upstream.SourceConfig
	SourceAdmin      = upstream.SourceAdmin
	SourceCLI        = upstream.SourceCLI
	ApprovalApproved = upstream.ApprovalApproved
	ApprovalPending  = upstream.ApprovalPending
	ApprovalRejected = upstream.ApprovalRejected
)

// upstreamRow is a row of the upstreams table.
type upstreamRow struct {
	ID           string `db:"id"`
	Name         string `db:"name"`
	Description  string `db:"description"`
	Transport    string `db:"transport"`
	Config       string `db:"config"`
	Enabled      bool   `db:"enabled"`
	AutoConnect  bool   `db:"auto_connect"`
	Source       string `db:"source"`
	Approval     string `db:"approval"`
	ApprovedHash string `db:"approved_hash"`
	ApprovalNote string `db:"approval_note"`
	CreatedAt    string `db:"created_at"`
	UpdatedAt    string `db:"updated_at"`
}

const upstreamCols = `id, name, description, transport, config, enabled, auto_connect,
	source, approval, approved_hash, approval_note, created_at, updated_at`

// timeLayout is RFC 3339 with a fixed-width fraction, so that stored
// timestamps sort as text in time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

func checkRecord(r *Record) error {
	if r.Spec.Name == "" {
		return errors.New("upstream record: empty name")
	}
	switch r.Source {
	case SourceConfig, SourceAdmin, SourceCLI:
	default:
		return fmt.Errorf("upstream %q: invalid source %q", r.Spec.Name, r.Source)
	}
	switch r.Approval {
	case ApprovalApproved, ApprovalPending, ApprovalRejected:
	default:
		return fmt.Errorf("upstream %q: invalid approval %q", r.Spec.Name, r.Approval)
	}
	return nil
}

// toRow encodes r. It also replaces r.Spec by its decoded encoding, so
// that the record returned to the caller equals the one a later Get reads.
func toRow(r *Record) (upstreamRow, error) {
	if err := checkRecord(r); err != nil {
		return upstreamRow{}, err
	}
	config, err := json.Marshal(r.Spec)
	if err != nil {
		return upstreamRow{}, fmt.Errorf("upstream %q: encode spec: %w", r.Spec.Name, err)
	}
	var spec upstream.Spec
	if err := json.Unmarshal(config, &spec); err != nil {
		return upstreamRow{}, fmt.Errorf("upstream %q: encode spec: %w", r.Spec.Name, err)
	}
	r.Spec = spec
	if r.Approval == ApprovalApproved {
		r.ApprovalNote = "" // a note says why an approval was taken back
	}
	return upstreamRow{
		ID:           r.ID,
		Name:         spec.Name,
		Description:  spec.Description,
		Transport:    string(spec.InferTransport()),
		Config:       string(config),
		Enabled:      r.Enabled,
		AutoConnect:  r.AutoConnect,
		Source:       string(r.Source),
		Approval:     string(r.Approval),
		ApprovedHash: r.ApprovedHash,
		ApprovalNote: r.ApprovalNote,
		CreatedAt:    formatTime(r.CreatedAt),
		UpdatedAt:    formatTime(r.UpdatedAt),
	}, nil
}

// record decodes the row. A row that cannot be decoded (its spec is not
// valid JSON or not a valid spec, its source or approval is unknown, a
// timestamp is garbled) yields an [upstream.BrokenRegistration] saying why.
func (row *upstreamRow) record() (Record, error) {
	r := Record{
		ID:           row.ID,
		Enabled:      row.Enabled,
		AutoConnect:  row.AutoConnect,
		Source:       Source(row.Source),
		Approval:     Approval(row.Approval),
		ApprovedHash: row.ApprovedHash,
		ApprovalNote: row.ApprovalNote,
	}
	if err := row.decode(&r); err != nil {
		return Record{}, upstream.BrokenRegistration{ID: row.ID, Name: row.Name, Source: Source(row.Source), Reason: err.Error()}
	}
	return r, nil
}

func (row *upstreamRow) decode(r *Record) error {
	if err := json.Unmarshal([]byte(row.Config), &r.Spec); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("its spec is not valid JSON (%v, at byte %d)", err, syn.Offset)
		}
		return fmt.Errorf("its spec: %w", err)
	}
	r.Spec.Name = row.Name // the column is what uniqueness is enforced on
	switch t := r.Spec.InferTransport(); t {
	case upstream.TransportStdio, upstream.TransportSSE, upstream.TransportHTTP:
	case "":
		return errors.New("its spec has neither a command nor a URL")
	default:
		return fmt.Errorf("its spec names an unknown transport %q (want stdio, sse or http)", t)
	}
	if err := checkRecord(r); err != nil {
		return err
	}
	var err error
	if r.CreatedAt, err = parseTime(row.CreatedAt); err != nil {
		return fmt.Errorf("created_at: %w", err)
	}
	if r.UpdatedAt, err = parseTime(row.UpdatedAt); err != nil {
		return fmt.Errorf("updated_at: %w", err)
	}
	return nil
}

func notFound(name string) error { return fmt.Errorf("upstream %q: %w", name, ErrNotFound) }

// List returns every registered upstream that can be decoded, ordered by
// name. Rows that cannot be decoded are left out: [Store.Broken] lists them.
func (s *Store) List(ctx context.Context) ([]Record, error) {
	recs, _, err := s.scan(ctx)
	return recs, err
}

// Broken returns the registrations that cannot be decoded, ordered by name:
// a corrupt row never hides the others, and can still be listed and
// removed ([Store.Delete]).
func (s *Store) Broken(ctx context.Context) ([]upstream.BrokenRegistration, error) {
	_, broken, err := s.scan(ctx)
	return broken, err
}

// scan reads every row and sorts them into decoded and broken ones.
func (s *Store) scan(ctx context.Context) ([]Record, []upstream.BrokenRegistration, error) {
	var rows []upstreamRow
	if err := s.db.SelectContext(ctx, &rows, "SELECT "+upstreamCols+" FROM upstreams ORDER BY name"); err != nil {
		return nil, nil, fmt.Errorf("list upstreams: %w", err)
	}
	recs := make([]Record, 0, len(rows))
	var broken []upstream.BrokenRegistration
	for i := range rows {
		r, err := rows[i].record()
		var b upstream.BrokenRegistration
		switch {
		case errors.As(err, &b):
			broken = append(broken, b)
		case err != nil:
			return nil, nil, err
		default:
			recs = append(recs, r)
		}
	}
	return recs, broken, nil
}

// Get returns the named upstream, or an error wrapping [ErrNotFound], or,
// for a row that cannot be decoded, an [upstream.BrokenRegistration]
// (wrapping [upstream.ErrBroken]).
func (s *Store) Get(ctx context.Context, name string) (Record, error) {
	return getRecord(ctx, s.db, name)
}

func getRecord(ctx context.Context, q getter, name string) (Record, error) {
	var row upstreamRow
	err := q.GetContext(ctx, &row, "SELECT "+upstreamCols+" FROM upstreams WHERE name = ?", name)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, notFound(name)
	}
	if err != nil {
		return Record{}, fmt.Errorf("get upstream %q: %w", name, err)
	}
	return row.record()
}

// Create registers r. It assigns a new ID when r.ID is empty and sets
// CreatedAt and UpdatedAt. A name (or ID) already registered yields an
// error wrapping [ErrExists].
func (s *Store) Create(ctx context.Context, r Record) (Record, error) {
	out, err := s.CreateAll(ctx, []Record{r})
	if err != nil {
		return Record{}, err
	}
	return out[0], nil
}

// CreateAll registers every record in one transaction (one commit, so one
// fsync, however many there are), as [Store.Create] would each. Either all
// are registered or, on the first error, none.
func (s *Store) CreateAll(ctx context.Context, rs []Record) ([]Record, error) {
	now := s.stamp()
	out := make([]Record, len(rs))
	rows := make([]upstreamRow, len(rs))
	for i, r := range rs {
		if r.ID == "" {
			r.ID = uuid.NewString()
		} else if _, err := uuid.Parse(r.ID); err != nil {
			return nil, fmt.Errorf("upstream %q: invalid id %q: %w", r.Spec.Name, r.ID, err)
		}
		r.CreatedAt, r.UpdatedAt = now, now
		row, err := toRow(&r)
		if err != nil {
			return nil, err
		}
		out[i], rows[i] = r, row
	}
	if len(rows) == 0 {
		return out, nil
	}
	err := s.write(ctx, func(tx txx) error {
		for _, row := range rows {
			_, err := tx.NamedExecContext(ctx, `INSERT INTO upstreams (`+upstreamCols+`) VALUES (
				:id, :name, :description, :transport, :config, :enabled, :auto_connect,
				:source, :approval, :approved_hash, :approval_note, :created_at, :updated_at)`, row)
			if isUniqueViolation(err) {
				return fmt.Errorf("upstream %q: %w", row.Name, ErrExists)
			}
			if err != nil {
				return fmt.Errorf("create upstream %q: %w", row.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Update reads the named upstream, passes it to fn and stores what fn left,
// all in one write transaction, so concurrent updates (from any process)
// never lose each other's changes. An error from fn aborts the update and
// is returned as is. fn may rename the upstream by changing Spec.Name (a
// name already taken yields [ErrExists]); changes to ID and CreatedAt are
// ignored, and UpdatedAt is set to the current time.
func (s *Store) Update(ctx context.Context, name string, fn func(*Record) error) (Record, error) {
	var out Record
	err := s.write(ctx, func(tx txx) error {
		old, err := getRecord(ctx, tx, name)
		if err != nil {
			return err
		}
		r := old
		if err := fn(&r); err != nil {
			return err
		}
		r.ID, r.CreatedAt, r.UpdatedAt = old.ID, old.CreatedAt, s.stamp()
		row, err := toRow(&r)
		if err != nil {
			return err
		}
		_, err = tx.NamedExecContext(ctx, `UPDATE upstreams SET
			name = :name, description = :description, transport = :transport, config = :config,
			enabled = :enabled, auto_connect = :auto_connect, source = :source, approval = :approval,
			approved_hash = :approved_hash, approval_note = :approval_note, updated_at = :updated_at
			WHERE id = :id`, row)
		if isUniqueViolation(err) {
			return fmt.Errorf("rename upstream %q to %q: %w", name, row.Name, ErrExists)
		}
		if err != nil {
			return fmt.Errorf("update upstream %q: %w", name, err)
		}
		out = r
		return nil
	})
	if err != nil {
		return Record{}, err
	}
	return out, nil
}

// Delete removes the named upstream, its capabilities and its OAuth token,
// or returns an error wrapping [ErrNotFound].
func (s *Store) Delete(ctx context.Context, name string) error {
	return s.write(ctx, func(tx txx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM upstreams WHERE name = ?", name)
		if err != nil {
			return fmt.Errorf("delete upstream %q: %w", name, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("delete upstream %q: %w", name, err)
		}
		if n == 0 {
			return notFound(name)
		}
		// Its OAuth token goes with it: a later upstream of the same name
		// must log in again.
		if _, err := tx.ExecContext(ctx, "DELETE FROM oauth_tokens WHERE upstream = ?", name); err != nil {
			return fmt.Errorf("delete upstream %q: %w", name, err)
		}
		return nil
	})
}
