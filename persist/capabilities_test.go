package persist

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCapabilities(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		s := openClocked(t, d)
		ctx := t.Context()
		for _, n := range []string{"a", "b", "never"} {
			if _, err := s.Create(ctx, testRecord(n)); err != nil {
				t.Fatal(err)
			}
		}
		if c, err := s.Capabilities(ctx, "a"); err != nil || !cmp.Equal(c, Capabilities{}) {
			t.Errorf("never synced: %+v, %v", c, err)
		}
		if _, err := s.Capabilities(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Capabilities(nope): %v", err)
		}
		if err := s.SaveCapabilities(ctx, "nope", Capabilities{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("SaveCapabilities(nope): %v", err)
		}
		if err := s.SaveCapabilities(ctx, "a", Capabilities{Tools: []json.RawMessage{json.RawMessage(`{`)}}); err == nil {
			t.Error("invalid JSON accepted")
		}

		ca := Capabilities{
			Tools:             []json.RawMessage{json.RawMessage(`{"name":"t1","inputSchema":{"type":"object"}}`), json.RawMessage(`{"name":"t2"}`)},
			Resources:         []json.RawMessage{}, // listed, empty
			ResourceTemplates: nil,                 // never listed
			Prompts:           []json.RawMessage{json.RawMessage(`{"name":"p"}`)},
			ServerInfo:        json.RawMessage(`{"name":"srv","version":"1.0"}`),
			SyncedAt:          time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC),
		}
		if err := s.SaveCapabilities(ctx, "a", ca); err != nil {
			t.Fatal(err)
		}
		got, err := s.Capabilities(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(ca, got); d != "" {
			t.Errorf("Capabilities (-want +got):\n%s", d)
		}

		// Replacing; a zero SyncedAt means now.
		cb := Capabilities{Tools: []json.RawMessage{json.RawMessage(`{"name":"x"}`)}}
		if err := s.SaveCapabilities(ctx, "b", cb); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveCapabilities(ctx, "b", cb); err != nil {
			t.Fatal(err)
		}
		all, err := s.AllCapabilities(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || all["b"].SyncedAt.IsZero() {
			t.Fatalf("AllCapabilities: %+v", all)
		}
		cb.SyncedAt = all["b"].SyncedAt
		if d := cmp.Diff(map[string]Capabilities{"a": ca, "b": cb}, all); d != "" {
			t.Errorf("AllCapabilities (-want +got):\n%s", d)
		}

		// Renaming keeps them; deleting cascades.
		if _, err := s.Update(ctx, "a", func(r *Record) error { r.Spec.Name = "a2"; return nil }); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Capabilities(ctx, "a2"); err != nil || !cmp.Equal(ca, got) {
			t.Errorf("after rename: %v", err)
		}
		if err := s.Delete(ctx, "a2"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := s.db.GetContext(ctx, &n, "SELECT count(*) FROM capabilities"); err != nil || n != 1 {
			t.Errorf("capabilities rows after delete: %d, %v", n, err)
		}
		if _, err := s.Create(ctx, testRecord("a2")); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Capabilities(ctx, "a2"); err != nil || !cmp.Equal(c, Capabilities{}) {
			t.Errorf("recreated upstream inherited capabilities: %+v, %v", c, err)
		}
	})
}
