package persist

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"
)

// The store runs on SQLite (a file in the data directory, the default) or
// PostgreSQL (a server several hubs share). Its queries are written once,
// with ? placeholders and SQL both accept; [dbx] and [txx] rebind them for
// the dialect (sqlx.Rebind) and mark the errors of a server that cannot be
// reached ([ErrUnavailable]). What differs beyond that (opening, schema
// versions, the write lock, change detection) is in sqlite.go-style code in
// store.go and in postgres.go.

// dialect is the SQL dialect of a store.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

func (d dialect) String() string {
	if d == dialectPostgres {
		return "postgres"
	}
	return "sqlite"
}

// getter is what reads one row: a dbx or a txx.
type getter interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
}

// dbx is the store's connection pool.
type dbx struct {
	*sqlx.DB
	classify func(error) error // nil: errors as they are
}

func (d dbx) err(err error) error {
	if err == nil || d.classify == nil {
		return err
	}
	return d.classify(err)
}

// GetContext is sqlx's, with the query rebound for the dialect.
func (d dbx) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return d.err(d.DB.GetContext(ctx, dest, d.Rebind(query), args...))
}

// SelectContext is sqlx's, with the query rebound for the dialect.
func (d dbx) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return d.err(d.DB.SelectContext(ctx, dest, d.Rebind(query), args...))
}

// ExecContext is sqlx's, with the query rebound for the dialect.
func (d dbx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := d.DB.ExecContext(ctx, d.Rebind(query), args...)
	return res, d.err(err)
}

// txx is a write transaction.
type txx struct {
	*sqlx.Tx
	classify func(error) error
}

func (t txx) err(err error) error {
	if err == nil || t.classify == nil {
		return err
	}
	return t.classify(err)
}

// GetContext is sqlx's, with the query rebound for the dialect.
func (t txx) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.err(t.Tx.GetContext(ctx, dest, t.Rebind(query), args...))
}

// SelectContext is sqlx's, with the query rebound for the dialect.
func (t txx) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.err(t.Tx.SelectContext(ctx, dest, t.Rebind(query), args...))
}

// ExecContext is sqlx's, with the query rebound for the dialect.
func (t txx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := t.Tx.ExecContext(ctx, t.Rebind(query), args...)
	return res, t.err(err)
}

// NamedExecContext is sqlx's (which binds for the dialect itself).
func (t txx) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	res, err := t.Tx.NamedExecContext(ctx, query, arg)
	return res, t.err(err)
}

// isUniqueViolation reports whether err is a UNIQUE or PRIMARY KEY
// violation, in either dialect.
func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" // unique_violation
}

// unavailable is an error of a store that cannot be reached; it unwraps to
// ErrUnavailable and to the driver's error.
type unavailable struct {
	where string
	err   error
}

func (e *unavailable) Error() string {
	return fmt.Sprintf("the registration store (%s) cannot be reached: %v", e.where, e.err)
}

func (e *unavailable) Unwrap() []error { return []error{ErrUnavailable, e.err} }
