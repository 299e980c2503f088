package persist

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestBrokenRows: a row that cannot be decoded is listed apart with the
// reason, never hides the others, and can be removed.
func TestBrokenRows(t *testing.T) {
	tests := []struct {
		name   string
		column string // the column written behind the Store's back
		value  string
		want   string // in the reason
	}{
		{"garbage", "config", `{"name":"x","transport":"stdio","comm`, "not valid JSON"},
		{"not an object", "config", `[1,2,3]`, "cannot unmarshal"},
		{"wrong type", "config", `{"command":["a"]}`, "cannot unmarshal"},
		{"unknown transport", "config", `{"transport":"carrier-pigeon","command":"x"}`, `unknown transport "carrier-pigeon"`},
		{"neither command nor url", "config", `{"description":"x"}`, "neither a command nor a URL"},
		{"garbled time", "created_at", "yesterday", "created_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachDialect(t, func(t *testing.T, d dialect) {
				db := newTestDB(t, d)
				s := db.open(t, nil)
				ctx := t.Context()
				for _, n := range []string{"alpha", "bad", "zulu"} {
					if _, err := s.Create(ctx, testRecord(n)); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := db.raw(t).ExecContext(ctx, `UPDATE upstreams SET `+tt.column+` = ? WHERE name = 'bad'`, tt.value); err != nil {
					t.Fatal(err)
				}
				recs, err := s.List(ctx)
				if err != nil {
					t.Fatalf("List with a broken row: %v", err)
				}
				var names []string
				for _, r := range recs {
					names = append(names, r.Spec.Name)
				}
				if strings.Join(names, ",") != "alpha,zulu" {
					t.Errorf("List = %v, want alpha,zulu", names)
				}
				broken, err := s.Broken(ctx)
				if err != nil || len(broken) != 1 || broken[0].Name != "bad" || broken[0].ID == "" || !strings.Contains(broken[0].Reason, tt.want) {
					t.Fatalf("Broken = %+v, %v; want bad, its id and a reason containing %q", broken, err, tt.want)
				}
				if broken[0].Source != SourceAdmin {
					t.Errorf("broken source = %q, want %q", broken[0].Source, SourceAdmin)
				}
				_, err = s.Get(ctx, "bad")
				var b upstream.BrokenRegistration
				if !errors.Is(err, upstream.ErrBroken) || !errors.As(err, &b) || b.Name != "bad" || errors.Is(err, ErrNotFound) {
					t.Errorf("Get of the broken row: %v; want an error wrapping ErrBroken", err)
				}
				if _, err := s.Update(ctx, "bad", func(*Record) error { return nil }); !errors.Is(err, upstream.ErrBroken) {
					t.Errorf("Update of the broken row: %v; want ErrBroken", err)
				}
				if err := s.Delete(ctx, "bad"); err != nil {
					t.Fatalf("Delete of the broken row: %v", err)
				}
				if broken, err := s.Broken(ctx); err != nil || len(broken) != 0 {
					t.Errorf("Broken after Delete = %v, %v", broken, err)
				}
				if _, err := s.Get(ctx, "bad"); !errors.Is(err, ErrNotFound) {
					t.Errorf("Get after Delete: %v", err)
				}
			})
		})
	}
}
