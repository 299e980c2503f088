package hub

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// corruptStored writes config into the spec column of a stored
// registration, behind the store's back.
func corruptStored(t *testing.T, h *Hub, name, config string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+h.opts.Store.(testStore).Path()+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.Exec(`UPDATE upstreams SET config = ? WHERE name = ?`, config, name); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("no stored row named %s", name)
	}
}

// TestBrokenRegistrationAPI: a stored registration that cannot be decoded
// is listed by the REST API as FAILED with the reason, refuses the
// operations that need its spec with a clear error, and DELETE removes it;
// the others keep running. A broken config-file row is replaced from the
// file.
func TestBrokenRegistrationAPI(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("cfg", "-only", "echo"))
	api := srv.URL + "/api/servers"
	for _, name := range []string{"good", "bad"} {
		spec := fixtureSpec(name, "-only", "pid")
		if _, err := h.opts.Store.Create(t.Context(), upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true,
			Source: upstream.SourceCLI, Approval: upstream.ApprovalApproved, ApprovedHash: spec.Fingerprint()}); err != nil {
			t.Fatal(err)
		}
	}
	corruptStored(t, h, "bad", `{"name":"bad","command":`)
	corruptStored(t, h, "cfg", `{"transport":"carrier-pigeon"}`)
	if err := h.reconcile(t.Context()); err != nil {
		t.Fatalf("reconcile with a broken row: %v", err)
	}
	eventually(t, 20*time.Second, "good CONNECTED", func() bool {
		u, ok := h.mgr.Get("good")
		return ok && u.Status().State == upstream.StateConnected
	})
	if _, ok := h.mgr.Get("bad"); ok {
		t.Error("a broken registration runs")
	}

	code, out := apiDo(t, "GET", api, "", testToken)
	if code != 200 {
		t.Fatalf("list with a broken row: %d %v", code, out)
	}
	var bad map[string]any
	for _, s := range out["servers"].([]any) {
		if v := s.(map[string]any); v["name"] == "bad" {
			bad = v
		}
	}
	if bad == nil || bad["state"] != "FAILED" || !strings.Contains(fmt.Sprint(bad["lastError"]), "cannot be decoded: its spec is not valid JSON") {
		t.Errorf("GET /api/servers shows bad as %v; want FAILED with the decode error", bad)
	}
	if code, out := apiDo(t, "GET", api+"/bad", "", testToken); code != 200 || !strings.Contains(fmt.Sprint(out["server"]), "FAILED") {
		t.Errorf("GET bad: %d %v", code, out)
	}
	if code, out := apiDo(t, "POST", api+"/bad/approve", "", testToken); code != 409 || out["error"] != "BROKEN" || !strings.Contains(fmt.Sprint(out["message"]), "remove it") {
		t.Errorf("approve bad: %d %v; want 409 BROKEN", code, out)
	}
	if code, out := apiDo(t, "PUT", api+"/bad", `{"description":"x"}`, testToken); code != 409 || out["error"] != "BROKEN" {
		t.Errorf("update bad: %d %v; want 409 BROKEN", code, out)
	}
	if code, out := apiDo(t, "POST", api, fmt.Sprintf(`{"name":"bad","command":%q}`, fixture), testToken); code != 409 || out["error"] != "ALREADY_EXISTS" {
		t.Errorf("add over bad: %d %v; want 409 ALREADY_EXISTS", code, out)
	}
	if code, out := apiDo(t, "DELETE", api+"/bad", "", testToken); code != 200 || out["removed"] != true {
		t.Fatalf("DELETE bad: %d %v", code, out)
	}
	if code, _ := apiDo(t, "GET", api+"/bad", "", testToken); code != 404 {
		t.Errorf("GET bad after DELETE: %d, want 404", code)
	}

	// The config file is the truth for its names: a reload replaces the
	// broken row with the file's entry, which runs again.
	if err := h.Reload(t.Context(), []ConfigServer{{Spec: fixtureSpec("cfg", "-only", "echo")}}); err != nil {
		t.Fatalf("reload over a broken config row: %v", err)
	}
	r, err := h.opts.Store.Get(t.Context(), "cfg")
	if err != nil || r.Spec.Command != fixture {
		t.Errorf("cfg after the reload: %+v, %v", r, err)
	}
	eventually(t, 20*time.Second, "cfg CONNECTED", func() bool {
		u, ok := h.mgr.Get("cfg")
		return ok && u.Status().State == upstream.StateConnected
	})
}
