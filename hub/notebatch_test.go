package hub

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// listNotes counts the list_changed notifications c received, by kind
// ("tools", "prompts", "resources"), until none came for quiet.
func listNotes(c *pipeClient, quiet time.Duration) map[string]int {
	n := map[string]int{}
	for {
		select {
		case line := <-c.notes:
			m, err := wire.Parse(line)
			if err != nil {
				continue
			}
			if kind, ok := strings.CutSuffix(strings.TrimPrefix(m.Method, "notifications/"), "/list_changed"); ok {
				n[kind]++
			}
		case <-time.After(quiet):
			return n
		}
	}
}

// failures counts the failed connection attempts a hub logs.
type failures struct {
	slog.Handler
	n *atomic.Int32
}

func (f failures) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "upstream connect failed" || r.Message == "upstream connection lost" {
		f.n.Add(1)
	}
	return nil
}
func (f failures) WithAttrs([]slog.Attr) slog.Handler { return f }
func (f failures) WithGroup(string) slog.Handler      { return f }

// TestReloadNotifiesOnce: a change of several upstreams at once (the
// hub's start with four servers; a reload of the config file that restarts
// three, removes one and adds one; three servers registered at once from
// another process, as mcp-hub import does) sends a session at most one
// list_changed of each kind, once the upstreams it touched are up (or
// failed): a client lists once for the whole change, not once per server
// (an upstream whose attempt fails ends the wait: coming up on a retry is
// a change of its own, which a very busy machine may cause). Measured
// with a real stdio session counting its notifications: on the old code
// (6 runs) the start sent 3 or 4 tools/list_changed, the reload 4 or 5,
// the import 3; now 1 each.
func TestReloadNotifiesOnce(t *testing.T) {
	spec := func(name string, args ...string) ConfigServer { return ConfigServer{Spec: fixtureSpec(name, args...)} }
	before := []ConfigServer{
		spec("a", "-only", "echo", "-extra", "a1"),
		spec("b", "-only", "add", "-extra", "b1"),
		spec("c", "-only", "pid", "-extra", "c1", "-conformance"),
		spec("d", "-only", "cwd", "-extra", "d1"),
	}
	after := []ConfigServer{
		spec("a", "-only", "echo", "-extra", "a2"),
		spec("b", "-only", "add", "-extra", "b2"),
		spec("c", "-only", "pid", "-extra", "c2", "-conformance"),
		spec("e", "-only", "cwd", "-extra", "e1"),
	}
	for _, withStore := range []bool{false, true} {
		t.Run(map[bool]string{false: "no store", true: "store"}[withStore], func(t *testing.T) {
			failed := &atomic.Int32{}
			opts := &Options{Logger: slog.New(failures{slog.NewTextHandler(io.Discard, nil), failed}), StorePoll: 50 * time.Millisecond}
			if withStore {
				st, err := persist.Open(context.Background(), t.TempDir(), nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				opts.Store = testStore{st}
			}
			h, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { h.Close() })
			// A session that is there before the upstreams are. go-sdk
			// announces the hub's own tools, registered in New, 10 ms
			// later: that is not the hub's start.
			c := stdioClient(t, h)
			listNotes(c, 100*time.Millisecond)
			extra := func() []string {
				var out []string
				for _, e := range h.Catalog().Tools() {
					if len(e.Name) == 2 {
						out = append(out, e.Name)
					}
				}
				slices.Sort(out)
				return out
			}
			up := func(names ...string) bool {
				for _, n := range names {
					u, ok := h.Manager().Get(n)
					if !ok || u.Status().State != upstream.StateConnected {
						return false
					}
				}
				return true
			}

			if err := h.Start(t.Context(), before); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "a to d", func() bool { return up("a", "b", "c", "d") && slices.Equal(extra(), []string{"a1", "b1", "c1", "d1"}) })
			atStart := listNotes(c, 500*time.Millisecond)
			failedAtStart := failed.Swap(0)

			if err := h.Reload(t.Context(), after); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "the reloaded catalog", func() bool {
				return up("a", "b", "c", "e") && slices.Equal(extra(), []string{"a2", "b2", "c2", "e1"})
			})
			reloaded := listNotes(c, 500*time.Millisecond)
			t.Logf("list_changed at start %v, after the reload %v", atStart, reloaded)
			for what, w := range map[string]struct {
				n      map[string]int
				failed int32
			}{"start": {atStart, failedAtStart}, "reload": {reloaded, failed.Load()}} {
				most := 1 + int(w.failed) // a retry that succeeds is announced on its own
				if w.failed > 0 {
					t.Logf("%s: %d connection attempts failed", what, w.failed)
				}
				if w.n["tools"] < 1 || w.n["tools"] > most {
					t.Errorf("%s: %d tools/list_changed, want 1", what, w.n["tools"])
				}
				for _, kind := range []string{"prompts", "resources"} {
					if w.n[kind] > most {
						t.Errorf("%s: %d %s/list_changed, want at most 1", what, w.n[kind], kind)
					}
				}
			}
			// The session was told, and lists the new catalog.
			if line := c.call(t, 9, "tools/list", `{}`); !strings.Contains(string(line), `"e1"`) || strings.Contains(string(line), `"d1"`) {
				t.Errorf("tools/list after the reload: %.300s", line)
			}
			if !withStore {
				return
			}
			listNotes(c, 100*time.Millisecond) // tools/list's own
			// Three servers registered at once from another process (as
			// mcp-hub import does): heard once too.
			other, err := persist.Open(t.Context(), filepath.Dir(opts.Store.(testStore).Path()), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			var regs []upstream.Registration
			for _, n := range []string{"f", "g", "h"} {
				r := upstream.Registration{Spec: fixtureSpec(n, "-only", "echo", "-extra", n+"1"), Enabled: true, AutoConnect: true, Source: upstream.SourceCLI}
				if err := r.Spec.Validate(); err != nil {
					t.Fatal(err)
				}
				r.Approve()
				regs = append(regs, r)
			}
			if _, err := other.CreateAll(t.Context(), regs); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "the imported servers", func() bool {
				return up("f", "g", "h") && slices.Equal(extra(), []string{"a2", "b2", "c2", "e1", "f1", "g1", "h1"})
			})
			imported := listNotes(c, 500*time.Millisecond)
			t.Logf("list_changed after an import of 3 servers %v", imported)
			if imported["tools"] < 1 || imported["tools"] > 1+int(failed.Load()) {
				t.Errorf("import: %d tools/list_changed, want 1", imported["tools"])
			}
		})
	}
}
