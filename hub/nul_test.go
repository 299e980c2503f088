package hub

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/pgtest"
)

// Issue 26: NUL (U+0000) in any text field of a registration is refused
// with the same clear error on SQLite and PostgreSQL, before either store
// sees it; a client that names itself with NUL is recorded in the audit
// log on both. On the old code SQLite stored the description and
// PostgreSQL failed with a raw database error.
func TestNULRefusedAlikeOnBothStores(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			var h *Hub
			var srv *httptest.Server
			if store == "sqlite" {
				h, srv = startHTTPHub(t, nil)
			} else {
				_, dsn := pgtest.Schema(t)
				h, srv = startReplica(t, dsn, &Options{})
			}
			api := srv.URL + "/api/servers"
			for _, tc := range []struct {
				field string
				body  map[string]any
			}{
				{"description", map[string]any{"description": "a\u0000b"}},
				{"args[1]", map[string]any{"args": []string{"-only", "echo\u0000"}}},
				{"cwd", map[string]any{"cwd": "/tmp\u0000"}},
				{"env.K", map[string]any{"env": map[string]string{"K": "v\u0000"}}},
			} {
				body := map[string]any{"name": "nul", "command": fixture}
				for k, v := range tc.body {
					body[k] = v
				}
				code, out := apiJSON(t, "POST", api, body)
				want := tc.field + ": must not contain the NUL character"
				if code != 400 || out["error"] != "INVALID_ARGUMENT" || !strings.Contains(fmt.Sprint(out["message"]), want) {
					t.Errorf("%s with NUL: %d %v, want 400 saying %q", tc.field, code, out, want)
				}
			}
			if _, err := h.opts.Store.Get(context.Background(), "nul"); err == nil {
				t.Error("a registration with NUL was stored")
			}
			// The same through the admin tool.
			client := mcp.NewClient(&mcp.Implementation{Name: "evil\u0000client", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: authClient()}, sessionEra)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			text, isErr := toolCall(t, cs, "hub_add_server", map[string]any{"name": "nul", "command": fixture, "description": "a\u0000b"})
			if !isErr || !strings.Contains(text, "description: must not contain the NUL character") {
				t.Errorf("hub_add_server with NUL: %v %q", isErr, text)
			}
			// A client's name is no field of a registration: it is recorded,
			// with its NUL shown as '?', on both stores.
			if text, isErr := toolCall(t, cs, "hub_add_server", map[string]any{"name": "fine", "command": fixture}); isErr {
				t.Fatalf("hub_add_server: %s", text)
			}
			log, err := h.opts.Store.(testStore).AuditLog(context.Background(), "fine", 0)
			if err != nil || len(log) == 0 || !strings.HasPrefix(log[len(log)-1].Actor, "admin:evil?client/") {
				t.Errorf("audit of the add by a client named with NUL: %+v %v", log, err)
			}
		})
	}
}
