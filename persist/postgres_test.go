package persist

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/pgtest"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// What only the PostgreSQL store does: announce changes to the other hubs
// of the database, and report a server it cannot reach.

// waitClosed waits up to limit for ch to close.
func waitClosed(ch <-chan struct{}, limit time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(limit):
		return false
	}
}

// waitListening waits until s listens for notifications.
func waitListening(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !s.Listening() {
		if time.Now().After(deadline) {
			t.Fatal("the store never started listening")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Another Store's registry change closes Notify's channel and makes
// Changed true; a Store's own changes, and changes others need not apply
// (statuses, capability caches, the audit log), do neither.
func TestPostgresNotify(t *testing.T) {
	db := newTestDB(t, dialectPostgres)
	s1, s2 := db.open(t, nil), db.open(t, nil)
	ctx := t.Context()
	waitListening(t, s1)
	if _, err := s1.Changed(ctx); err != nil { // baseline
		t.Fatal(err)
	}

	for _, tc := range []struct {
		what     string
		write    func() error
		announce bool
	}{
		{"another store creates", func() error { _, err := s2.Create(ctx, testRecord("a")); return err }, true},
		{"the store itself creates", func() error { _, err := s1.Create(ctx, testRecord("own")); return err }, false},
		{"another store saves a status", func() error {
			return s2.SaveStatus(ctx, upstream.Status{Name: "a", State: upstream.StateConnected})
		}, false},
		{"another store saves capabilities", func() error {
			return s2.SaveInventory(ctx, "a", upstream.Inventory{SyncedAt: time.Now()})
		}, false},
		{"another store audits", func() error { return s2.Audit(ctx, AuditEntry{Actor: "cli", Action: "x"}) }, false},
		{"another store approves", func() error {
			_, err := s2.Update(ctx, "a", func(r *Record) error { r.Approve(); return nil })
			return err
		}, true},
		{"another store records pins", func() error {
			return s2.RecordPins(ctx, "a", upstream.PinRecord{Actor: "hub", Action: "pin", Baseline: true,
				Changes: []upstream.PinChange{{Pin: pinOf(upstream.PinTool, "echo", "h1")}}})
		}, true},
		{"another store saves a token", func() error {
			return s2.SaveToken(ctx, upstream.Token{Upstream: "a", Resource: "https://x/mcp", AccessToken: "at"})
		}, true},
		{"another store deletes", func() error { return s2.Delete(ctx, "a") }, true},
	} {
		note := s1.Notify()
		if err := tc.write(); err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		// A notification comes at once; 500ms is enough to tell none came.
		limit := 500 * time.Millisecond
		if tc.announce {
			limit = 10 * time.Second
		}
		if got := waitClosed(note, limit); got != tc.announce {
			t.Errorf("%s: notified = %v, want %v", tc.what, got, tc.announce)
		}
		changed, err := s1.Changed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if changed != tc.announce {
			t.Errorf("%s: Changed() = %v, want %v", tc.what, changed, tc.announce)
		}
	}
}

// A server that cannot be reached: reads and writes fail with an error
// wrapping ErrUnavailable that says so (and never the password), nothing is
// half-applied, and everything works again, notifications included, once it
// is back.
func TestPostgresUnavailable(t *testing.T) {
	db := newTestDB(t, dialectPostgres)
	u, err := url.Parse(db.loc)
	if err != nil {
		t.Fatal(err)
	}
	px := pgtest.NewProxy(t, u.Host)
	u.Host = px.Addr()
	u.User = url.UserPassword(u.User.Username(), "pw-s3cret")
	other := db.open(t, nil) // directly: it stays connected
	s, err := OpenPostgres(t.Context(), u.String(), &Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	if _, err := s.Create(ctx, testRecord("before")); err != nil {
		t.Fatal(err)
	}
	waitListening(t, s)
	if _, err := s.Changed(ctx); err != nil {
		t.Fatal(err)
	}

	px.Cut()
	checkErr := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnavailable) || !errors.Is(err, upstream.ErrStoreUnavailable) {
			t.Errorf("%s with the server cut off: %v; want ErrUnavailable", what, err)
			return
		}
		if msg := err.Error(); !strings.Contains(msg, "cannot be reached") || !strings.Contains(msg, px.Addr()) || strings.Contains(msg, "s3cret") {
			t.Errorf("%s: error %q: want it to say the store at %s cannot be reached, without the password", what, msg, px.Addr())
		}
	}
	_, err = s.Create(ctx, testRecord("during"))
	checkErr("Create", err)
	t.Logf("Create with the server cut off: %v", err)
	_, err = s.Update(ctx, "before", func(r *Record) error { r.Spec.Description = "changed"; return nil })
	checkErr("Update", err)
	checkErr("Delete", s.Delete(ctx, "before"))
	_, err = s.List(ctx)
	checkErr("List", err)
	_, err = s.Changed(ctx)
	checkErr("Changed", err)
	checkErr("Ping", s.Ping(ctx))
	_, err = OpenPostgres(ctx, u.String(), nil)
	checkErr("OpenPostgres", err)

	// Meanwhile another hub, which still reaches the server, registers.
	note := s.Notify()
	if _, err := other.Create(ctx, testRecord("meanwhile")); err != nil {
		t.Fatal(err)
	}

	px.Restore()
	// The listener reconnects within its reconnect delay and says changes
	// may have been missed.
	if !waitClosed(note, 10*time.Second) {
		t.Error("no notification after the server came back")
	}
	if changed, err := s.Changed(ctx); err != nil || !changed {
		t.Errorf("Changed after the outage = %v, %v; want the other hub's registration", changed, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping once back: %v", err)
	}
	if _, err := s.Create(ctx, testRecord("after")); err != nil {
		t.Fatalf("Create once back: %v", err)
	}
	recs, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Spec.Name+":"+r.Spec.Description)
	}
	if got := strings.Join(names, ","); got != "after:0,before:0,meanwhile:0" {
		t.Errorf("registrations after the outage: %s; want after, before (unchanged) and meanwhile: nothing of the failed writes", got)
	}
}

// A URL with a password that is wrong or unreachable never shows it.
func TestPostgresURLNeverShowsPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://hub:pw-s3cret@127.0.0.1:1/mcphub?connect_timeout=2",
		"postgresql://hub:pw-s3cret@[::1/mcphub",
		"postgres://hub:pw-s3cret@127.0.0.1:5432/db?sslmode=bogus",
	} {
		_, err := OpenPostgres(t.Context(), dsn, nil)
		if err == nil {
			t.Fatalf("%s: opened", dsn)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if _, err := OpenPostgres(t.Context(), "mysql://x", nil); err == nil || !strings.Contains(err.Error(), "postgres://") {
		t.Errorf("another scheme: %v", err)
	}
}
