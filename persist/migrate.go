package persist

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"
)

// The schema migrations, applied in order, for both dialects: one list.
// File migrations/NNNN_*.sql takes the schema from version NNNN-1 to NNNN;
// versions are contiguous from 1. Where PostgreSQL needs other SQL than
// SQLite (types: BOOLEAN, identity columns, collations), a file of the same
// name in migrations/postgres/ replaces it there; every other migration
// runs as is on both. Never edit a released migration: add a new file (and
// its PostgreSQL form when the dialects differ).
//
//go:embed migrations/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string // SQLite's (and PostgreSQL's, unless pgSQL differs)
	pgSQL   string // PostgreSQL's
}

var loadMigrations = sync.OnceValues(func() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	var migs []migration
	byName := map[string]int{}
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("load migrations: bad file name %q: want NNNN_name.sql", base)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("load migrations: %w", err)
		}
		byName[base] = len(migs)
		migs = append(migs, migration{version: v, name: base, sql: string(b), pgSQL: string(b)})
	}
	pgNames, err := fs.Glob(migrationFS, "migrations/postgres/*.sql")
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	for _, n := range pgNames {
		i, ok := byName[path.Base(n)]
		if !ok {
			return nil, fmt.Errorf("load migrations: %s replaces no migration of migrations/", n)
		}
		b, err := migrationFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("load migrations: %w", err)
		}
		migs[i].pgSQL = string(b)
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].version < migs[j].version })
	for i, m := range migs {
		if m.version != i+1 {
			return nil, fmt.Errorf("load migrations: %s: want version %d", m.name, i+1)
		}
	}
	return migs, nil
})

// migrate brings the schema to version target (<= len(migs)). The pending
// migrations run in one BEGIN IMMEDIATE transaction together with the
// user_version bump, which re-reads user_version after taking the write
// lock, so concurrent openers in other processes never apply a migration
// twice, and a failure leaves the schema as it was. One transaction, one
// sync: a new database is created in one fsync instead of one per
// migration (9 of them, about 20 ms of a cold start on this machine).
func migrate(ctx context.Context, conn *sqlx.Conn, dbPath string, migs []migration, target int) error {
	var v int
	if err := conn.GetContext(ctx, &v, "PRAGMA user_version"); err != nil {
		return fmt.Errorf("read schema version of %s: %w", dbPath, classify(dbPath, err))
	}
	if v > len(migs) {
		return tooNew(dbPath, v, len(migs))
	}
	if v < target {
		if _, err := migrateStep(ctx, conn, dbPath, migs, target); err != nil {
			return err
		}
	}
	return nil
}

// migrateStep applies the migrations up to target that another process has
// not applied yet, in one transaction, and returns the schema version it
// leaves.
func migrateStep(ctx context.Context, conn *sqlx.Conn, dbPath string, migs []migration, target int) (int, error) {
	tx, err := conn.BeginTxx(ctx, nil) // BEGIN IMMEDIATE (see the DSN): holds the write lock
	if err != nil {
		return 0, fmt.Errorf("migrate %s: %w", dbPath, err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.GetContext(ctx, &v, "PRAGMA user_version"); err != nil {
		return 0, fmt.Errorf("migrate %s: %w", dbPath, err)
	}
	if v > len(migs) {
		return 0, tooNew(dbPath, v, len(migs))
	}
	if v >= target {
		return v, nil // another process got there first
	}
	for _, m := range migs[v:target] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return 0, fmt.Errorf("migrate %s to version %d (%s): %w", dbPath, m.version, m.name, err)
		}
		if hook := dataMigrations[m.version]; hook != nil {
			if err := hook(ctx, txx{Tx: tx}); err != nil {
				return 0, fmt.Errorf("migrate %s to version %d (%s): %w", dbPath, m.version, m.name, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", target)); err != nil {
		return 0, fmt.Errorf("migrate %s to version %d: %w", dbPath, target, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("migrate %s to version %d: commit: %w", dbPath, target, err)
	}
	return target, nil
}
