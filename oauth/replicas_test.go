package oauth

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/pgtest"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Issue 18: a login on one replica (its token stored in the PostgreSQL
// store they share) reaches an upstream waiting in NEEDS_LOGIN on another
// at once, by notification: the waiting client polls only once a minute
// here.
func TestWaitLoginNotifiedAcrossReplicas(t *testing.T) {
	a := newAuthServer(t)
	_, dsn := pgtest.Schema(t)
	open := func() *persist.Store {
		st, err := persist.OpenPostgres(t.Context(), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	here, there := open(), open()
	spec := upstream.Spec{Name: "web", URL: a.srv.URL + "/mcp"}
	c := New(Options{Store: here, HTTPClient: a.srv.Client(), Poll: time.Minute}).client(&spec)
	rt := c.Transport(http.DefaultTransport, nil, redact.NewScrubber())
	deadline := time.Now().Add(10 * time.Second)
	for !here.Listening() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.WaitLogin(ctx) }()
	time.Sleep(100 * time.Millisecond) // WaitLogin is waiting
	start := time.Now()
	if err := there.SaveToken(ctx, upstream.Token{Upstream: "web", Resource: spec.URL, AccessToken: a.valid, Pasted: true}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitLogin: %v", err)
	}
	took := time.Since(start)
	t.Logf("a login on the other replica reached the waiting client after %v", took.Round(time.Millisecond))
	// The poll runs once a minute: only the notification wakes it this
	// soon (the measured delay is logged; no tight wall-clock bound).
	if took > 10*time.Second {
		t.Errorf("WaitLogin returned %v after the login, want well under the poll interval (by notification)", took)
	}
	if code, err := get(t, rt, a.srv.URL+"/mcp", ""); err != nil || code != 200 {
		t.Errorf("after the login: %d %v", code, err)
	}
}
