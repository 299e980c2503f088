// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema on the server whose URL is in $MCP_HUB_TEST_POSTGRES (make test
// starts a throwaway server and sets it: scripts/pg.sh). Without the
// variable a test that needs PostgreSQL is skipped, loudly, except in CI
// (CI set), where it fails: CI must never pass without running them.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver
)

// Env names the variable with the URL of the test server.
const Env = "MCP_HUB_TEST_POSTGRES"

// Server returns the URL of the test server, or skips the test (fails it
// in CI) when there is none.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set in CI: the PostgreSQL tests would not run (make test sets it)", Env)
		}
		t.Skipf("SKIPPING a PostgreSQL test: %s is not set (make test starts a server and sets it; by hand: scripts/pg.sh run go test ./...)", Env)
	}
	return u
}

var admin = sync.OnceValues(func() (*sql.DB, error) {
	return sql.Open("pgx", os.Getenv(Env))
})

// Schema creates an empty schema for the test, dropped (with everything in
// it) after the test, and returns its name and the server's URL with its
// search_path set to it.
func Schema(t testing.TB) (name, dsn string) {
	t.Helper()
	server := Server(t)
	db, err := admin()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name = "t_" + hex.EncodeToString(b)
	if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP SCHEMA " + name + " CASCADE") })
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return name, u.String()
}
