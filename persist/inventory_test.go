package persist

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

func TestInventoryRoundTrip(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		ctx := context.Background()
		s := newTestDB(t, d).open(t, nil)
		if _, err := s.Create(ctx, testRecord("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, testRecord("never")); err != nil {
			t.Fatal(err)
		}
		inv := upstream.Inventory{
			Tools:      []json.RawMessage{json.RawMessage(`{"name":"t1","inputSchema":{"type":"object"},"zz":1}`)},
			Prompts:    []json.RawMessage{json.RawMessage(`{"name":"p"}`)},
			ServerInfo: json.RawMessage(`{"name":"srv","version":"1"}`),
			SyncedAt:   time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		}
		if err := s.SaveInventory(ctx, "a", inv); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveInventory(ctx, "missing", inv); !errors.Is(err, ErrNotFound) {
			t.Errorf("SaveInventory(missing) = %v, want ErrNotFound", err)
		}
		all, err := s.Inventories(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := all["a"]
		if !ok || len(all) != 1 {
			t.Fatalf("Inventories = %v, want only a", all)
		}
		if !got.Stale || string(got.Tools[0]) != string(inv.Tools[0]) || string(got.Prompts[0]) != `{"name":"p"}` ||
			got.Resources != nil || !got.SyncedAt.Equal(inv.SyncedAt) || string(got.ServerInfo) != string(inv.ServerInfo) {
			t.Errorf("inventory = %+v", got)
		}
		if got.Variants != nil {
			t.Errorf("variants of an inventory saved without = %+v", got.Variants)
		}
		// Instances' variants are kept until the next save without them.
		inv.Variants = &upstream.Variants{Tools: []json.RawMessage{json.RawMessage(`{"name":"t1","description":"v2"}`)},
			Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"x://{id}"}`)}}
		if err := s.SaveInventory(ctx, "a", inv); err != nil {
			t.Fatal(err)
		}
		all, _ = s.Inventories(ctx)
		if v := all["a"].Variants; v == nil || len(v.Tools) != 1 || string(v.Tools[0]) != `{"name":"t1","description":"v2"}` ||
			v.Prompts != nil || len(v.Templates) != 1 {
			t.Errorf("variants = %+v", v)
		}
		inv.Variants = nil
		if err := s.SaveInventory(ctx, "a", inv); err != nil {
			t.Fatal(err)
		}
		if all, _ = s.Inventories(ctx); all["a"].Variants != nil {
			t.Errorf("variants after a save without = %+v", all["a"].Variants)
		}
		// A listed-but-empty tool list is remembered as empty, not "never listed".
		if err := s.SaveInventory(ctx, "never", upstream.Inventory{}); err != nil {
			t.Fatal(err)
		}
		all, _ = s.Inventories(ctx)
		if e, ok := all["never"]; !ok || e.Tools == nil || len(e.Tools) != 0 {
			t.Errorf("empty inventory = %+v, %v", e, ok)
		}
	})
}

func TestStatuses(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		ctx := context.Background()
		s := newTestDB(t, d).open(t, nil)
		if _, err := s.Create(ctx, testRecord("a")); err != nil {
			t.Fatal(err)
		}
		since := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)
		st := upstream.Status{Name: "a", State: upstream.StateCrashed, LastError: "exit status 3", PID: 42, Tools: 7, Attempts: 2, Since: since}
		if err := s.SaveStatus(ctx, st); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveStatus(ctx, upstream.Status{Name: "gone", State: upstream.StateConnected}); err != nil {
			t.Errorf("SaveStatus of an unregistered upstream = %v, want it ignored", err)
		}
		st.State, st.LastError = upstream.StateConnected, ""
		if err := s.SaveStatus(ctx, st); err != nil {
			t.Fatal(err)
		}
		all, err := s.Statuses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := all["a"]
		if len(all) != 1 || got.State != upstream.StateConnected || got.PID != 42 || got.Tools != 7 || got.Attempts != 2 ||
			!got.Since.Equal(since) || got.HubPID != os.Getpid() || time.Since(got.ReportedAt) > time.Minute {
			t.Errorf("status = %+v", got)
		}
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if all, _ := s.Statuses(ctx); len(all) != 0 {
			t.Errorf("statuses after delete = %v", all)
		}
	})
}
