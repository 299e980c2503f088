package persist

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rawDB opens path with a plain DSN, bypassing the Store.
func rawDB(t *testing.T, path string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("sqlite3", dsn(path, "_busy_timeout=5000", "_foreign_keys=on"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func userVersion(t *testing.T, s *Store) int {
	t.Helper()
	var v int
	if err := s.db.GetContext(t.Context(), &v, "PRAGMA user_version"); err != nil {
		t.Fatal(err)
	}
	return v
}

func latestVersion(t *testing.T) int {
	t.Helper()
	migs, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	return len(migs)
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// snapshot is a file's content and modification time.
type snapshot struct {
	data  []byte
	mtime time.Time
}

func snap(t *testing.T, path string) snapshot {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{data, fi.ModTime()}
}

func (a snapshot) same(b snapshot) bool { return bytes.Equal(a.data, b.data) && a.mtime.Equal(b.mtime) }

func TestMigrationsEmbedded(t *testing.T) {
	migs, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(migs) < 2 {
		t.Fatalf("%d migrations, want at least 2", len(migs))
	}
	// PostgreSQL has its own SQL where the dialects differ (booleans,
	// identity columns), the same elsewhere.
	if m := migs[0]; m.pgSQL == m.sql || !strings.Contains(m.pgSQL, "BOOLEAN") || strings.Contains(m.pgSQL, "AUTOINCREMENT") {
		t.Errorf("migration %s: no PostgreSQL form", m.name)
	}
	if m := migs[1]; m.pgSQL != m.sql {
		t.Errorf("migration %s: a PostgreSQL form where none is needed", m.name)
	}
	for _, m := range migs {
		if strings.Contains(m.pgSQL, "AUTOINCREMENT") || strings.Contains(m.pgSQL, "pasted         INTEGER") {
			t.Errorf("migration %s: SQLite SQL for PostgreSQL", m.name)
		}
	}
}

func TestOpenEmptyDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "mcp-hub")
	s := openStore(t, dir)

	if got, want := s.Path(), filepath.Join(dir, "hub.db"); got != want {
		t.Errorf("Path() = %q, want %q", got, want)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("dir mode %v, want 0700", m)
	}
	if _, err := s.Create(t.Context(), testRecord("x")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"hub.db", "hub.db-wal", "hub.db-shm"} {
		if m := mode(t, filepath.Join(dir, f)); m != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, m)
		}
	}

	// Check the PRAGMAs on a pooled reader and on the writer connection.
	type pragmas struct{ journal, sync, busy, fk string }
	want := pragmas{"wal", "2", "5000", "1"}
	read := func(get func(dest any, q string) error) pragmas {
		var p pragmas
		for _, x := range []struct {
			dst *string
			q   string
		}{
			{&p.journal, "PRAGMA journal_mode"}, {&p.sync, "PRAGMA synchronous"},
			{&p.busy, "PRAGMA busy_timeout"}, {&p.fk, "PRAGMA foreign_keys"},
		} {
			if err := get(x.dst, x.q); err != nil {
				t.Fatalf("%s: %v", x.q, err)
			}
		}
		return p
	}
	if got := read(func(d any, q string) error { return s.db.GetContext(t.Context(), d, q) }); got != want {
		t.Errorf("reader PRAGMAs = %+v, want %+v", got, want)
	}
	if got := read(func(d any, q string) error { return s.wconn.GetContext(t.Context(), d, q) }); got != want {
		t.Errorf("writer PRAGMAs = %+v, want %+v", got, want)
	}
	if v := userVersion(t, s); v != latestVersion(t) {
		t.Errorf("user_version = %d, want %d", v, latestVersion(t))
	}

	// Reopening an up-to-date database changes nothing.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := snap(t, s.Path())
	s2 := openStore(t, dir)
	if v := userVersion(t, s2); v != latestVersion(t) {
		t.Errorf("user_version after reopen = %d", v)
	}
	if _, err := s2.Get(t.Context(), "x"); err != nil {
		t.Errorf("Get after reopen: %v", err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if !before.same(snap(t, s.Path())) {
		t.Error("reopening modified hub.db")
	}
}

func TestOpenExistingDirKeepsMode(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	openStore(t, dir)
	if m := mode(t, dir); m != 0o750 {
		t.Errorf("existing dir mode changed to %v", m)
	}
}

// Build a database at each older schema version, put a row in it, and check
// Open migrates it to the latest version with the row intact.
func TestMigrateFromOlderVersions(t *testing.T) {
	migs, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	forEachDialect(t, func(t *testing.T, d dialect) {
		for from := range len(migs) {
			db := newTestDB(t, d)
			raw := db.raw(t)
			conn, err := raw.Connx(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if d == dialectPostgres {
				key, _ := pgKeys(db.schema(t))
				err = pgMigrate(t.Context(), conn, nil, db.loc, key, migs, from)
			} else {
				err = migrate(t.Context(), conn, db.loc, migs, from)
			}
			if err != nil {
				t.Fatalf("migrate to %d: %v", from, err)
			}
			_ = conn.Close()
			if from >= 1 {
				_, err := raw.ExecContext(t.Context(), `INSERT INTO upstreams
					(id, name, description, transport, config, enabled, auto_connect, source, approval, approved_hash, created_at, updated_at)
					VALUES ('0b7f5f7e-4a55-4c38-9a1e-0c3f54cbb0c1', 'old', 'kept', 'stdio',
					'{"name":"old","description":"kept","transport":"stdio","command":"srv"}',
					?, ?, 'cli', 'pending', '', '2024-01-02T03:04:05.000000000Z', '2024-01-02T03:04:05.000000000Z')`, true, false)
				if err != nil {
					t.Fatal(err)
				}
			}

			s := db.open(t, nil)
			if v := schemaVersion(t, s); v != len(migs) {
				t.Errorf("from %d: schema version = %d, want %d", from, v, len(migs))
			}
			q := "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'audit_at'"
			if d == dialectPostgres {
				q = "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'audit_at'"
			}
			var idx int
			if err := s.db.GetContext(t.Context(), &idx, q); err != nil || idx != 1 {
				t.Errorf("from %d: index audit_at: %d, %v", from, idx, err)
			}
			if from >= 1 {
				r, err := s.Get(t.Context(), "old")
				if err != nil {
					t.Fatalf("from %d: %v", from, err)
				}
				if r.Spec.Description != "kept" || r.Spec.Command != "srv" || r.Source != SourceCLI || !r.Enabled ||
					!r.CreatedAt.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)) {
					t.Errorf("from %d: row changed: %+v", from, r)
				}
			}
		}
	})
}

func TestRefuseNewerSchema(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		db := newTestDB(t, d)
		s := db.open(t, nil)
		if _, err := s.Create(t.Context(), testRecord("x")); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		raw := db.raw(t)
		set := "PRAGMA user_version = 99"
		if d == dialectPostgres {
			set = "UPDATE hub_meta SET schema_version = 99"
		}
		if _, err := raw.ExecContext(t.Context(), set); err != nil {
			t.Fatal(err)
		}
		var before snapshot
		if d == dialectSQLite {
			if err := raw.Close(); err != nil {
				t.Fatal(err)
			}
			before = snap(t, s.Path())
			time.Sleep(10 * time.Millisecond) // so that a write would show in the mtime
		}

		_, err := db.openErr(t.Context(), nil)
		if !errors.Is(err, ErrTooNew) {
			t.Fatalf("Open = %v, want ErrTooNew", err)
		}
		want := "has schema version 99 but this mcp-hub understands up to " + strconv.Itoa(latestVersion(t)) + "; upgrade mcp-hub"
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), s.Path()) {
			t.Errorf("error %q does not say %q and %q", err, want, s.Path())
		}
		if d == dialectPostgres {
			var v, n int
			if err := raw.GetContext(t.Context(), &v, "SELECT schema_version FROM hub_meta"); err != nil || v != 99 {
				t.Errorf("schema version after the refusal: %d, %v", v, err)
			}
			if err := raw.GetContext(t.Context(), &n, "SELECT count(*) FROM upstreams"); err != nil || n != 1 {
				t.Errorf("rows after the refusal: %d, %v", n, err)
			}
			return
		}
		if !before.same(snap(t, s.Path())) {
			t.Error("hub.db was modified")
		}

		// The re-check inside the migration transaction refuses it too.
		conn, err := rawDB(t, s.Path()).Connx(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		migs, _ := loadMigrations()
		if _, err := migrateStep(t.Context(), conn, s.Path(), migs, len(migs)); !errors.Is(err, ErrTooNew) {
			t.Errorf("migrateStep = %v, want ErrTooNew", err)
		}
	})
}

func TestRefuseCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(data []byte, pageSize int)
		say     string
	}{
		{"header page", func(data []byte, pageSize int) { garble(data[:pageSize]) }, "not a database"},
		{"table page", func(data []byte, pageSize int) { garble(data[pageSize : 2*pageSize]) }, "malformed"},
		// A wrong freelist size in the header: the file opens, quick_check
		// reports it.
		{"freelist count", func(data []byte, _ int) { data[39] = 5 }, "quick_check says: Freelist: size is 0 but should be 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			for _, n := range []string{"a", "b", "c"} {
				if _, err := s.Create(t.Context(), testRecord(n)); err != nil {
					t.Fatal(err)
				}
			}
			var pageSize int
			if err := s.db.GetContext(t.Context(), &pageSize, "PRAGMA page_size"); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(s.Path() + "-wal"); err == nil {
				t.Fatal("WAL left after Close; corruption would not reach the file")
			}
			data, err := os.ReadFile(s.Path())
			if err != nil {
				t.Fatal(err)
			}
			tc.corrupt(data, pageSize)
			if err := os.WriteFile(s.Path(), data, 0o600); err != nil {
				t.Fatal(err)
			}
			before := snap(t, s.Path())

			_, err = Open(t.Context(), dir, nil)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open = %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), tc.say) {
				t.Errorf("error %q does not say %q", err, tc.say)
			}
			if !before.same(snap(t, s.Path())) {
				t.Error("hub.db was modified")
			}
		})
	}
}

func garble(b []byte) {
	for i := range b {
		b[i] = byte(i*7 + 13)
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/xdg/data")
	if d, err := DefaultDir(); err != nil || d != "/xdg/data/mcp-hub" {
		t.Errorf("DefaultDir() = %q, %v", d, err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	want := filepath.Join(home, ".local", "share", "mcp-hub")
	if runtime.GOOS == "darwin" {
		want = filepath.Join(home, "Library", "Application Support", "mcp-hub")
	}
	for _, xdg := range []string{"", "relative/ignored"} {
		t.Setenv("XDG_DATA_HOME", xdg)
		if d, err := DefaultDir(); err != nil || d != want {
			t.Errorf("XDG_DATA_HOME=%q: DefaultDir() = %q, %v; want %q", xdg, d, err, want)
		}
	}
}

func TestDSNEscapesPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "we?ird #dir%20")
	s := openStore(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "hub.db")); err != nil {
		t.Fatalf("database not at %s: %v", s.Path(), err)
	}
}
