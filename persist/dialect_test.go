package persist

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/mcp-hub/mcp-hub/internal/pgtest"
)

// The store's tests run against both dialects: SQLite in a temporary
// directory, and PostgreSQL in a schema of their own (package pgtest).

// testDB is an empty database of one dialect, of one test.
type testDB struct {
	d   dialect
	loc string // the data directory, or the URL (its search_path the test's schema)
}

// dialects are the dialects every dialect-aware test runs on.
var dialects = []dialect{dialectSQLite, dialectPostgres}

// forEachDialect runs f as a subtest per dialect.
func forEachDialect(t *testing.T, f func(t *testing.T, d dialect)) {
	t.Helper()
	for _, d := range dialects {
		t.Run(d.String(), func(t *testing.T) {
			if d == dialectPostgres {
				pgServer(t)
			}
			f(t, d)
		})
	}
}

// pgServer returns the URL of the test server, or skips (fails in CI).
func pgServer(t testing.TB) string {
	t.Helper()
	return pgtest.Server(t)
}

// newTestDB returns an empty database of dialect d, removed after the
// test.
func newTestDB(t testing.TB, d dialect) testDB {
	t.Helper()
	if d == dialectSQLite {
		return testDB{d: d, loc: t.TempDir()}
	}
	_, dsn := pgtest.Schema(t)
	return testDB{d: d, loc: dsn}
}

// openErr opens a Store on the database.
func (db testDB) openErr(ctx context.Context, opts *Options) (*Store, error) {
	if db.d == dialectPostgres {
		return OpenPostgres(ctx, db.loc, opts)
	}
	return Open(ctx, db.loc, opts)
}

// open opens a Store on the database, closed after the test.
func (db testDB) open(t testing.TB, opts *Options) *Store {
	t.Helper()
	s, err := db.openErr(t.Context(), opts)
	if err != nil {
		t.Fatalf("open %s store: %v", db.d, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// raw returns a connection pool to the database that bypasses every
// Store; its queries are rebound for the dialect.
func (db testDB) raw(t testing.TB) dbx {
	t.Helper()
	var (
		x   *sqlx.DB
		err error
	)
	if db.d == dialectPostgres {
		x, err = sqlx.Open("pgx", db.loc)
	} else {
		x, err = sqlx.Open("sqlite3", dsn(db.loc+"/"+FileName, "_busy_timeout=5000", "_foreign_keys=on"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return dbx{DB: x}
}

// schemaVersion reads the schema version of the store's database.
func schemaVersion(t testing.TB, s *Store) int {
	t.Helper()
	q := "PRAGMA user_version"
	if s.dialect == dialectPostgres {
		q = "SELECT schema_version FROM hub_meta WHERE id = 1"
	}
	var v int
	if err := s.db.GetContext(t.Context(), &v, q); err != nil {
		t.Fatal(err)
	}
	return v
}

// childEnvOf is the environment that tells a child process (TestMain's
// roles) which database to open.
func (db testDB) childEnv() []string {
	return []string{"PERSIST_TEST_DIALECT=" + db.d.String(), "PERSIST_TEST_DIR=" + db.loc}
}

// childDB is the database a child process was told to open.
func childDB() testDB {
	d := dialectSQLite
	if os.Getenv("PERSIST_TEST_DIALECT") == dialectPostgres.String() {
		d = dialectPostgres
	}
	return testDB{d: d, loc: os.Getenv("PERSIST_TEST_DIR")}
}

// schema is the PostgreSQL schema of the database.
func (db testDB) schema(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(db.loc)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}

func (db testDB) String() string { return fmt.Sprintf("%s database %s", db.d, db.loc) }
