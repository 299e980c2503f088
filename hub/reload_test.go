package hub

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/persist"
)

// TestReload: an edited config adds, restarts and removes upstreams while a
// session stays connected and hears list_changed; with and without a store.
func TestReload(t *testing.T) {
	for _, withStore := range []bool{false, true} {
		t.Run(map[bool]string{false: "no store", true: "store"}[withStore], func(t *testing.T) {
			opts := &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StorePoll: 50 * time.Millisecond}
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
			if err := h.Start(t.Context(), []ConfigServer{{Spec: fixtureSpec("a", "-only", "echo")}, {Spec: fixtureSpec("b", "-only", "pid")}}); err != nil {
				t.Fatal(err)
			}
			c := stdioClient(t, h)
			tools := func() []string {
				var out []string
				for _, e := range h.Catalog().Tools() {
					if e.Server != "" {
						out = append(out, e.Server+"/"+e.Name)
					}
				}
				return out
			}
			eventually(t, 10*time.Second, "a and b", func() bool { return slices.Equal(tools(), []string{"a/echo", "b/pid"}) })
			ua, _ := h.Manager().Get("a")
			pidA := ua.Status().PID

			// a changes, b goes, c comes.
			if err := h.Reload(t.Context(), []ConfigServer{{Spec: fixtureSpec("a", "-only", "echo,add")}, {Spec: fixtureSpec("c", "-only", "cwd")}}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "the edited catalog", func() bool {
				return slices.Equal(tools(), []string{"a/add", "c/cwd", "a/echo"}) || slices.Equal(tools(), []string{"a/add", "a/echo", "c/cwd"})
			})
			if _, ok := h.Manager().Get("b"); ok {
				t.Error("b still runs")
			}
			if ua, _ := h.Manager().Get("a"); ua.Status().PID == pidA {
				t.Error("a was not restarted with its new spec")
			}
			// The session stayed and was told.
			if line := c.call(t, 5, "tools/call", `{"name":"add","arguments":{"a":1,"b":2}}`); len(line) == 0 {
				t.Fatal("no answer on the old session")
			}
			got := false
			for len(c.notes) > 0 {
				if n := <-c.notes; strings.Contains(string(n), `"notifications/tools/list_changed"`) {
					got = true
				}
			}
			if !got {
				t.Error("the session heard no list_changed")
			}
		})
	}
}
