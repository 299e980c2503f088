package hubstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/persist"
)

func TestDirAndOpen(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_DATA_HOME", xdg)
	given := t.TempDir()
	for _, tt := range []struct{ dataDir, want string }{
		{"", filepath.Join(xdg, "mcp-hub")},
		{given, given},
	} {
		dir, err := Dir(tt.dataDir)
		if err != nil || dir != tt.want {
			t.Errorf("Dir(%q) = %q, %v; want %q", tt.dataDir, dir, err, tt.want)
		}
		path, err := Path(tt.dataDir)
		if want := filepath.Join(tt.want, persist.FileName); err != nil || path != want {
			t.Errorf("Path(%q) = %q, %v; want %q", tt.dataDir, path, err, want)
		}
		st, err := Open(context.Background(), tt.dataDir)
		if err != nil {
			t.Fatalf("Open(%q): %v", tt.dataDir, err)
		}
		if st.Path() != path {
			t.Errorf("Open(%q) opened %s, want %s", tt.dataDir, st.Path(), path)
		}
		st.Close()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("Open(%q) did not create the store: %v", tt.dataDir, err)
		}
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), notDir); err == nil || !strings.HasPrefix(err.Error(), "open the registration store: ") {
		t.Errorf("Open of a file: %v, want an error about the registration store", err)
	}
}

// TestAudit: the adapter's Audit stores the detail as JSON, and refuses
// one that cannot be marshalled.
func TestAudit(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := Store{Store: st}
	if err := s.Audit(ctx, "cli", "add", "notes", map[string]any{"launch": "notes-server --flag"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit(ctx, "cli", "remove", "notes", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Audit(ctx, "cli", "add", "notes", func() {}); err == nil || !strings.HasPrefix(err.Error(), "audit detail: ") {
		t.Errorf("Audit of a func: %v, want an audit detail error", err)
	}
	log, err := st.AuditLog(ctx, "notes", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Actor != "cli" || log[0].Action != "add" || string(log[0].Detail) != `{"launch":"notes-server --flag"}` ||
		log[1].Action != "remove" || log[1].Detail != nil {
		t.Errorf("audit log: %+v", log)
	}
}
