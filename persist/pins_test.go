package persist

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

func pinOf(kind upstream.PinKind, name, hash string) upstream.Pin {
	def, _ := json.Marshal(map[string]string{"name": name, "v": hash})
	return upstream.Pin{Kind: kind, Name: name, Hash: hash, Definition: def, ApprovedBy: "hub"}
}

// Pins survive a restart (reopening the file); a baseline is recorded once;
// a change applies only over the pin it was reviewed against; every change
// lands in the pin history and the audit log in the same transaction; and
// pins go with their upstream while the history stays.
func TestPins(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		db := newTestDB(t, d)
		s := db.open(t, nil)
		ctx := t.Context()
		if _, err := s.Create(ctx, testRecord("a")); err != nil {
			t.Fatal(err)
		}
		base := upstream.PinRecord{Actor: "hub", Action: "pin", Baseline: true, Detail: json.RawMessage(`{"reason":"first listing"}`),
			Changes: []upstream.PinChange{{Pin: pinOf(upstream.PinTool, "echo", "h1")}, {Pin: pinOf(upstream.PinInstructions, "", "i1")}}}
		if err := s.RecordPins(ctx, "a", base); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordPins(ctx, "a", base); !errors.Is(err, upstream.ErrPinned) {
			t.Fatalf("second baseline: %v, want ErrPinned", err)
		}
		if err := s.RecordPins(ctx, "missing", base); !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown upstream: %v", err)
		}
		// A change reviewed against a pin that is no longer there: nothing of
		// it is stored (the new tool neither).
		stale := upstream.PinRecord{Actor: "cli", Action: "approve-pins", Changes: []upstream.PinChange{
			{Pin: pinOf(upstream.PinTool, "fresh", "f1")},
			{Pin: pinOf(upstream.PinTool, "echo", "h2"), Prev: "h0"},
		}}
		if err := s.RecordPins(ctx, "a", stale); !errors.Is(err, upstream.ErrPinsChanged) {
			t.Fatalf("stale change: %v, want ErrPinsChanged", err)
		}
		stale.Changes[1].Prev = "h1"
		if err := s.RecordPins(ctx, "a", stale); err != nil {
			t.Fatal(err)
		}
		s.Close()

		s = db.open(t, nil)
		pins, err := s.Pins(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range pins["a"] {
			got[string(p.Kind)+"/"+p.Name] = p.Hash + " by " + p.ApprovedBy
			if p.ApprovedAt.IsZero() || !json.Valid(p.Definition) {
				t.Errorf("pin %+v", p)
			}
		}
		want := map[string]string{"tool/echo": "h2 by hub", "tool/fresh": "f1 by hub", "instructions/": "i1 by hub"}
		if len(got) != len(want) {
			t.Fatalf("pins after reopen = %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("pin %s = %q, want %q", k, got[k], v)
			}
		}
		hist, err := s.PinHistory(ctx, "a")
		if err != nil || len(hist) != 4 {
			t.Fatalf("history = %+v, %v", hist, err)
		}
		if h := hist[3]; h.Name != "echo" || h.OldHash != "h1" || h.NewHash != "h2" || h.Actor != "cli" || h.Action != "approve-pins" {
			t.Errorf("last history row = %+v", h)
		}
		audit, err := s.AuditLog(ctx, "a", 0)
		if err != nil || len(audit) != 2 || audit[0].Action != "pin" || audit[1].Action != "approve-pins" || audit[1].Actor != "cli" {
			t.Fatalf("audit = %+v, %v", audit, err)
		}
		if string(audit[0].Detail) != `{"reason":"first listing"}` {
			t.Errorf("audit detail = %s", audit[0].Detail)
		}

		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if pins, _ := s.Pins(ctx); len(pins) != 0 {
			t.Errorf("pins of a removed upstream: %v", pins)
		}
		if hist, _ := s.PinHistory(ctx, "a"); len(hist) != 4 {
			t.Errorf("history after removal: %d rows, want 4", len(hist))
		}
	})
}
