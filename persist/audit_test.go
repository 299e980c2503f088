package persist

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAudit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d dialect) {
		s := openClocked(t, d)
		ctx := t.Context()
		at := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
		entries := []AuditEntry{
			{At: at, Actor: "cli", Action: "add", Upstream: "a", Detail: json.RawMessage(`{"command":"srv","envNames":["TOKEN"]}`)},
			{At: at.Add(time.Second), Actor: "admin:claude/s1", Action: "approve", Upstream: "a"},
			{At: at.Add(2 * time.Second), Actor: "config", Action: "add", Upstream: "b"},
			{At: at.Add(3 * time.Second), Actor: "cli", Action: "remove", Upstream: "a", Detail: json.RawMessage(`"gone"`)},
		}
		for _, e := range entries {
			if err := s.Audit(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Audit(ctx, AuditEntry{Actor: "cli"}); err == nil {
			t.Error("empty action accepted")
		}
		if err := s.Audit(ctx, AuditEntry{Actor: "cli", Action: "x", Detail: json.RawMessage(`{nope`)}); err == nil {
			t.Error("invalid detail accepted")
		}

		got, err := s.AuditLog(ctx, "a", 0)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]AuditEntry{entries[0], entries[1], entries[3]}, got); d != "" {
			t.Errorf("AuditLog(a) (-want +got):\n%s", d)
		}
		got, err = s.AuditLog(ctx, "", 2)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(entries[2:], got); d != "" {
			t.Errorf("AuditLog(all, 2) (-want +got):\n%s", d)
		}

		// A zero At means now.
		if err := s.Audit(ctx, AuditEntry{Actor: "cli", Action: "noop"}); err != nil {
			t.Fatal(err)
		}
		got, err = s.AuditLog(ctx, "", 1)
		if err != nil || len(got) != 1 || got[0].At.IsZero() || got[0].Detail != nil {
			t.Errorf("last entry: %+v, %v", got, err)
		}
	})
}
