package persist

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// fullSpec sets every field of upstream.Spec (not a valid combination, but
// persist stores what it is given).
func fullSpec(name string) upstream.Spec {
	yes, no := true, false
	return upstream.Spec{
		Name:             name,
		Description:      "a server with everything",
		Transport:        upstream.TransportStdio,
		Command:          "/usr/local/bin/server",
		Args:             []string{"--port", "0", "two words"},
		Env:              map[string]string{"API_TOKEN": "s3cret-token", "MODE": "${HUB_MODE}"},
		Cwd:              "/srv/work",
		URL:              "https://example.com/mcp?key=s3cret-query",
		Headers:          map[string]string{"Authorization": "Bearer s3cret-header"},
		Tools:            upstream.ToolFilter{Allow: []string{"read_*", "list"}, Deny: []string{"read_secret"}},
		InitTimeout:      upstream.Duration(5 * time.Second),
		ListTimeout:      upstream.Duration(7 * time.Second),
		CallTimeout:      upstream.Duration(90 * time.Second),
		ProtocolVersion:  "2025-06-18",
		Start:            upstream.StartLazy,
		IdleTimeout:      upstream.Duration(10 * time.Minute),
		MaxInFlight:      8,
		AllowSampling:    &yes,
		AllowElicitation: &no,
		AllowRoots:       &yes,
	}
}

// fakeClock returns strictly increasing times, one second apart.
func fakeClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 3600))
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Second) }
}

func openClocked(t *testing.T, d dialect) *Store {
	t.Helper()
	return newTestDB(t, d).open(t, &Options{Now: fakeClock()})
}

func TestCRUDRoundTrip(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		s := openClocked(t, d)
		ctx := t.Context()
		spec := fullSpec("full")
		in := Record{
			Spec: spec, Enabled: true, AutoConnect: true, Source: SourceCLI,
			Approval: ApprovalApproved, ApprovedHash: spec.Fingerprint(),
		}
		created, err := s.Create(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if created.ID == "" || len(created.ID) != 36 || created.ID[14] != '4' {
			t.Errorf("ID %q is not a UUID v4", created.ID)
		}
		if created.CreatedAt.IsZero() || !created.CreatedAt.Equal(created.UpdatedAt) || created.CreatedAt.Location() != time.UTC {
			t.Errorf("timestamps: created %v updated %v", created.CreatedAt, created.UpdatedAt)
		}
		want := in
		want.ID, want.CreatedAt, want.UpdatedAt = created.ID, created.CreatedAt, created.UpdatedAt
		if d := cmp.Diff(want, created); d != "" {
			t.Errorf("Create returned (-want +got):\n%s", d)
		}
		got, err := s.Get(ctx, "full")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Get (-want +got):\n%s", d)
		}
		if !got.Approved() {
			t.Error("Approved() = false for an approved record")
		}

		// Columns mirror the spec.
		var cols struct {
			Description string `db:"description"`
			Transport   string `db:"transport"`
			Config      string `db:"config"`
		}
		if err := s.db.GetContext(ctx, &cols, "SELECT description, transport, config FROM upstreams WHERE name = 'full'"); err != nil {
			t.Fatal(err)
		}
		if cols.Description != spec.Description || cols.Transport != "stdio" || !json.Valid([]byte(cols.Config)) {
			t.Errorf("columns: %+v", cols)
		}

		// Duplicates.
		if _, err := s.Create(ctx, in); !errors.Is(err, ErrExists) {
			t.Errorf("duplicate name: %v, want ErrExists", err)
		}
		dupID := testRecord("other")
		dupID.ID = created.ID
		if _, err := s.Create(ctx, dupID); !errors.Is(err, ErrExists) {
			t.Errorf("duplicate id: %v, want ErrExists", err)
		}
		bad := testRecord("bad")
		bad.Source = "web"
		if _, err := s.Create(ctx, bad); err == nil {
			t.Error("invalid source accepted")
		}

		// List is ordered by name.
		for _, n := range []string{"zeta", "alpha"} {
			if _, err := s.Create(ctx, testRecord(n)); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range list {
			names = append(names, r.Spec.Name)
		}
		if d := cmp.Diff([]string{"alpha", "full", "zeta"}, names); d != "" {
			t.Errorf("List order (-want +got):\n%s", d)
		}
		if d := cmp.Diff(want, list[1]); d != "" {
			t.Errorf("List record (-want +got):\n%s", d)
		}

		// Update.
		upd, err := s.Update(ctx, "full", func(r *Record) error {
			r.Spec.Args = append(r.Spec.Args, "--verbose")
			r.Enabled = false
			r.ID = "ignored"
			r.CreatedAt = time.Time{}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if upd.ID != created.ID || !upd.CreatedAt.Equal(created.CreatedAt) || !upd.UpdatedAt.After(created.UpdatedAt) {
			t.Errorf("Update: id %q created %v updated %v", upd.ID, upd.CreatedAt, upd.UpdatedAt)
		}
		if upd.Approved() {
			t.Error("Approved() still true after the launch spec changed")
		}
		got, err = s.Get(ctx, "full")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(upd, got); d != "" {
			t.Errorf("Get after Update (-want +got):\n%s", d)
		}

		// Rename, and rename onto a taken name.
		if _, err := s.Update(ctx, "full", func(r *Record) error { r.Spec.Name = "renamed"; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "full"); !errors.Is(err, ErrNotFound) {
			t.Errorf("old name after rename: %v", err)
		}
		if _, err := s.Update(ctx, "renamed", func(r *Record) error { r.Spec.Name = "alpha"; return nil }); !errors.Is(err, ErrExists) {
			t.Errorf("rename onto taken name: %v, want ErrExists", err)
		}

		// fn's error aborts and is returned; its changes are dropped.
		errStop := errors.New("stop")
		before, _ := s.Get(ctx, "renamed")
		if _, err := s.Update(ctx, "renamed", func(r *Record) error {
			r.Spec.Description = "half-done"
			return errStop
		}); !errors.Is(err, errStop) {
			t.Errorf("Update fn error: %v", err)
		}
		after, _ := s.Get(ctx, "renamed")
		if d := cmp.Diff(before, after); d != "" {
			t.Errorf("aborted Update changed the record:\n%s", d)
		}

		// Not found.
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get: %v", err)
		}
		if _, err := s.Update(ctx, "nope", func(*Record) error { return nil }); !errors.Is(err, ErrNotFound) {
			t.Errorf("Update: %v", err)
		}
		if err := s.Delete(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete: %v", err)
		}

		// Delete.
		if err := s.Delete(ctx, "renamed"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "renamed"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get after Delete: %v", err)
		}
	})
}

// A6 and issue 12: an approved row is no longer approved once anything
// that decides what runs or leaves the machine is edited behind the hub's
// back, secret values included; tuning fields (description, timeouts) are
// not covered.
func TestApprovedDetectsTampering(t *testing.T) {
	set := func(path ...any) func(map[string]any) {
		v := path[len(path)-1]
		keys := path[:len(path)-1]
		return func(m map[string]any) {
			var cur any = m
			for i, k := range keys {
				last := i == len(keys)-1
				switch c := cur.(type) {
				case map[string]any:
					if last {
						if v == nil {
							delete(c, k.(string))
						} else {
							c[k.(string)] = v
						}
						return
					}
					if c[k.(string)] == nil {
						c[k.(string)] = map[string]any{}
					}
					cur = c[k.(string)]
				case []any:
					if last {
						c[k.(int)] = v
						return
					}
					cur = c[k.(int)]
				}
			}
		}
	}
	for _, tc := range []struct {
		name         string
		edit         func(config map[string]any)
		stillApprove bool
	}{
		{"env value", set("env", "API_TOKEN", "rotated"), false},
		{"env reference", set("env", "MODE", "${OTHER}"), false},
		{"env file", set("env", "MODE", "file:/etc/shadow"), false},
		{"env added", set("env", "NODE_OPTIONS", "--require /tmp/evil.js"), false},
		{"env removed", set("env", "MODE", nil), false},
		{"header value", set("headers", "Authorization", "Bearer ${AWS_SECRET_ACCESS_KEY}"), false},
		{"header added", set("headers", "X-Extra", "x"), false},
		{"url", set("url", "https://example.com/mcp?key=other"), false},
		{"command", set("command", "/tmp/evil"), false},
		{"cwd", set("cwd", "/tmp"), false},
		{"arg", set("args", 1, "1"), false},
		{"sampling", set("allowSampling", false), false},
		{"description", set("description", "other words"), true},
		{"call timeout", set("callTimeout", "1s"), true},
		{"tool filter", set("tools", "deny", []any{"x"}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, d dialect) {
				db := newTestDB(t, d)
				s := db.open(t, nil)
				ctx := t.Context()
				spec := fullSpec("app")
				if _, err := s.Create(ctx, Record{Spec: spec, Source: SourceAdmin, Approval: ApprovalApproved, ApprovedHash: spec.Fingerprint()}); err != nil {
					t.Fatal(err)
				}
				raw := db.raw(t)
				var config string
				if err := raw.GetContext(ctx, &config, "SELECT config FROM upstreams WHERE name = 'app'"); err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(config), &m); err != nil {
					t.Fatal(err)
				}
				tc.edit(m)
				b, _ := json.Marshal(m)
				if _, err := raw.ExecContext(ctx, "UPDATE upstreams SET config = ? WHERE name = 'app'", string(b)); err != nil {
					t.Fatal(err)
				}
				r, err := s.Get(ctx, "app")
				if err != nil {
					t.Fatal(err)
				}
				if r.Approved() != tc.stillApprove {
					t.Errorf("Approved() = %v after editing %s behind the store's back, want %v", r.Approved(), tc.name, tc.stillApprove)
				}
			})
		})
	}

	spec := fullSpec("app")
	for _, r := range []Record{
		{Approval: ApprovalPending, ApprovedHash: spec.Fingerprint(), Spec: spec},
		{Approval: ApprovalApproved, ApprovedHash: "", Spec: upstream.Spec{}},
		{Approval: ApprovalRejected, ApprovedHash: spec.Fingerprint(), Spec: spec},
		{Approval: ApprovalApproved, ApprovedHash: spec.Launch().LegacyHash(), Spec: spec},
	} {
		if r.Approved() {
			t.Errorf("Approved() true for %s with hash %q", r.Approval, r.ApprovedHash)
		}
	}
}

func TestRedacted(t *testing.T) {
	r := Record{ID: "x", Spec: fullSpec("red"), Source: SourceCLI, Approval: ApprovalPending}
	red := r.Redacted()
	text := fmt.Sprintf("%+v", red)
	if strings.Contains(text, "s3cret") {
		t.Errorf("redacted record shows a secret: %s", text)
	}
	if red.Spec.Env["API_TOKEN"] != "***" || red.Spec.Headers["Authorization"] != "***" {
		t.Errorf("env/headers not masked: %v %v", red.Spec.Env, red.Spec.Headers)
	}
	if r.Spec.Env["API_TOKEN"] != "s3cret-token" || r.Spec.Headers["Authorization"] != "Bearer s3cret-header" {
		t.Error("Redacted modified the original")
	}
	if red.ID != r.ID || red.Spec.Command != r.Spec.Command {
		t.Error("Redacted changed non-secret fields")
	}
}

// Concurrent read-modify-writes through two Stores (separate connection
// pools, as two processes would have) lose nothing and never see SQLITE_BUSY.
func TestUpdateAtomic(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		db := newTestDB(t, d)
		s1, s2 := db.open(t, nil), db.open(t, nil)
		ctx := t.Context()
		if _, err := s1.Create(ctx, testRecord("counter")); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8*(25+5))
		for i := range 8 {
			s := s1
			if i%2 == 1 {
				s = s2
			}
			wg.Go(func() {
				for j := range 25 {
					_, err := s.Update(ctx, "counter", func(r *Record) error {
						n, err := strconv.Atoi(r.Spec.Description)
						r.Spec.Description = strconv.Itoa(n + 1)
						return err
					})
					errs <- err
					if j%5 == 0 {
						_, err := s.Create(ctx, testRecord(fmt.Sprintf("c%d_%d", i, j)))
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		r, err := s2.Get(ctx, "counter")
		if err != nil {
			t.Fatal(err)
		}
		if r.Spec.Description != "200" {
			t.Errorf("counter = %s, want 200", r.Spec.Description)
		}
	})
}

func TestChanged(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		db := newTestDB(t, d)
		s1, s2 := db.open(t, nil), db.open(t, nil)
		ctx := t.Context()
		check := func(want bool, when string) {
			t.Helper()
			got, err := s1.Changed(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: Changed() = %v, want %v", when, got, want)
			}
		}
		if _, err := s2.Create(ctx, testRecord("before")); err != nil {
			t.Fatal(err)
		}
		check(false, "first call")
		check(false, "nothing happened")
		if _, err := s2.Create(ctx, testRecord("x")); err != nil {
			t.Fatal(err)
		}
		check(true, "after another Store wrote")
		check(false, "second call after that")
		if _, err := s1.Create(ctx, testRecord("own")); err != nil {
			t.Fatal(err)
		}
		if err := s1.Audit(ctx, AuditEntry{Actor: "cli", Action: "add", Upstream: "own"}); err != nil {
			t.Fatal(err)
		}
		check(false, "after the Store's own writes")
		// A Store that resyncs often, for the write behind the stores' back.
		s3 := db.open(t, &Options{Resync: 100 * time.Millisecond})
		if _, err := s3.Changed(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.raw(t).ExecContext(ctx, "UPDATE upstreams SET enabled = ? WHERE name = 'x'", false); err != nil {
			t.Fatal(err)
		}
		if d == dialectSQLite {
			check(true, "after a raw connection wrote")
			check(false, "then")
			return
		}
		// PostgreSQL: SQL by hand announces nothing; a resync catches it.
		check(false, "after a raw connection wrote (unannounced)")
		deadline := time.Now().Add(10 * time.Second)
		for {
			changed, err := s3.Changed(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if changed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("Changed never reported the resync")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func TestClosed(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		s, err := newTestDB(t, d).openErr(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := s.Create(t.Context(), testRecord("x")); err == nil {
			t.Error("Create on a closed store succeeded")
		}
		if _, err := s.Changed(t.Context()); err == nil {
			t.Error("Changed on a closed store succeeded")
		}
	})
}

func TestCreateAll(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		s := openClocked(t, d)
		ctx := t.Context()
		rec := func(name string) Record {
			return Record{Spec: fullSpec(name), Enabled: true, Source: SourceConfig, Approval: ApprovalApproved}
		}
		out, err := s.CreateAll(ctx, []Record{rec("a"), rec("b"), rec("c")})
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 3 || out[0].ID == "" || out[0].ID == out[1].ID || !out[0].CreatedAt.Equal(out[2].CreatedAt) {
			t.Errorf("CreateAll returned %+v", out)
		}
		// One name taken: nothing of the batch is registered.
		if _, err := s.CreateAll(ctx, []Record{rec("d"), rec("b"), rec("e")}); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), `"b"`) {
			t.Errorf("batch with a taken name: %v, want ErrExists naming b", err)
		}
		list, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range list {
			names = append(names, r.Spec.Name)
		}
		if strings.Join(names, ",") != "a,b,c" {
			t.Errorf("registered %v, want a,b,c (the failed batch rolled back)", names)
		}
		if out, err := s.CreateAll(ctx, nil); err != nil || len(out) != 0 {
			t.Errorf("empty batch: %v, %v", out, err)
		}
	})
}
