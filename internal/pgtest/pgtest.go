// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema on the server whose URL is in $MCPHUB_TEST_POSTGRES (make test
// starts a throwaway server and sets it: scripts/pg.sh). Without the
// variable a test that needs PostgreSQL is skipped, loudly, except in CI
// (CI set), where it fails: CI must never pass without running them.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver
)

// Env names the variable with the URL of the test server.
const Env = "MCPHUB_TEST_POSTGRES"

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

// Proxy forwards connections on a 127.0.0.1 port to a server until Cut:
// then the server looks unreachable to whoever connects through it
// (connections refused, sessions dropped) until Restore, on the same port.
type Proxy struct {
	t      testing.TB
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// NewProxy starts a proxy to target (host:port), closed after the test.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{t: t, target: target}
	p.Restore()
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.Cut)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Through returns dsn with its host:port replaced by the proxy's.
func (p *Proxy) Through(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		p.t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

// Restore accepts connections again.
func (p *Proxy) Restore() {
	addr := "127.0.0.1:0"
	if p.addr != "" {
		addr = p.addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatalf("proxy: %v", err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.ln != ln { // cut while this one was accepted: it goes too
				p.mu.Unlock()
				c.Close()
				s.Close()
				continue
			}
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

// Cut closes the listener and every connection through it.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Host returns the host:port of the server a URL names.
func Host(t testing.TB, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
