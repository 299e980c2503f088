package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// apiDo calls the admin REST API.
func apiDo(t *testing.T, method, url, body string, tok string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// apiSettled turns an admin answer of CONNECTING (admin calls stop waiting on
// a slow start after ~800 ms, which a loaded machine can hit) into CONNECTED
// once GET shows the server connected.
func apiSettled(t *testing.T, api, name string, out map[string]any) map[string]any {
	t.Helper()
	if out == nil || out["state"] != "CONNECTING" {
		return out
	}
	eventually(t, 30*time.Second, name+" CONNECTED", func() bool {
		_, got := apiDo(t, "GET", api+"/"+name, "", testToken)
		view, _ := got["server"].(map[string]any)
		return view != nil && view["state"] == "CONNECTED"
	})
	out["state"] = "CONNECTED"
	return out
}

func TestAdminAPI(t *testing.T) {
	h, srv := startHTTPHub(t, nil, fixtureSpec("cfg", "-only", "echo"))
	api := srv.URL + "/api/servers"
	if code, _ := apiDo(t, "GET", api, "", ""); code != 401 {
		t.Errorf("no token: %d", code)
	}
	if code, _ := apiDo(t, "GET", api, "", "wrong"); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	code, out := apiDo(t, "GET", api, "", testToken)
	if code != 200 || !strings.Contains(fmt.Sprint(out["servers"]), "cfg") {
		t.Fatalf("list: %d %v", code, out)
	}
	for _, bad := range []struct{ body, want string }{
		{`{"name":`, "not valid JSON"},
		{`[1,2]`, "JSON object"},
		{`{"name":"x","command":3}`, "command: must be a string"},
		{`{"name":"x","comand":"y"}`, "comand: unknown field"},
		{`{"command":"y"}`, "name: required"},
	} {
		code, out := apiDo(t, "POST", api, bad.body, testToken)
		if code != 400 || out["error"] != "INVALID_ARGUMENT" || !strings.Contains(fmt.Sprint(out["message"]), bad.want) {
			t.Errorf("POST %s: %d %v, want 400 mentioning %q", bad.body, code, out, bad.want)
		}
	}
	// Register: pending (nobody approved it) until POST .../approve.
	body := fmt.Sprintf(`{"name":"viaapi","command":%q,"args":["-only","pid"],"env":{"SECRET":"s3cr3t-value"}}`, fixture)
	code, out = apiDo(t, "POST", api, body, testToken)
	if code != 201 || out["approval"] != "pending" {
		t.Fatalf("add: %d %v", code, out)
	}
	if code, out := apiDo(t, "POST", api, body, testToken); code != 409 || out["error"] != "ALREADY_EXISTS" {
		t.Errorf("duplicate add: %d %v", code, out)
	}
	if code, out := apiDo(t, "POST", api+"/viaapi/connect", "", testToken); code != 409 || out["error"] != "NOT_APPROVED" {
		t.Errorf("connect before approval: %d %v", code, out)
	}
	code, out = apiJSON(t, "POST", api+"/viaapi/approve", reviewed(t, api, "viaapi"))
	if code != 200 || apiSettled(t, api, "viaapi", out)["state"] != "CONNECTED" {
		t.Fatalf("approve: %d %v", code, out)
	}
	code, out = apiDo(t, "GET", api+"/viaapi", "", testToken)
	if code != 200 || strings.Contains(fmt.Sprint(out), "s3cr3t-value") || !strings.Contains(fmt.Sprint(out), "***") {
		t.Errorf("get: %d %v", code, out)
	}
	if code, out := apiDo(t, "GET", api+"/nope", "", testToken); code != 404 || out["error"] != "NOT_FOUND" || out["server"] != "nope" || out["timestamp"] == nil {
		t.Errorf("get missing: %d %v", code, out)
	}
	for _, verb := range []string{"disconnect", "connect", "restart"} {
		if code, out := apiDo(t, "POST", api+"/viaapi/"+verb, "", testToken); code != 200 {
			t.Errorf("%s: %d %v", verb, code, out)
		}
	}
	if code, out := apiDo(t, "PUT", api+"/viaapi", `{"description":"changed"}`, testToken); code != 200 || apiSettled(t, api, "viaapi", out)["state"] != "CONNECTED" {
		t.Errorf("put: %d %v", code, out)
	}
	if code, out := apiDo(t, "PUT", api+"/viaapi", `{"name":"other"}`, testToken); code != 400 {
		t.Errorf("put with another name: %d %v", code, out)
	}
	if code, out := apiDo(t, "DELETE", api+"/cfg", "", testToken); code != 409 || out["error"] != "CONFIG_MANAGED" {
		t.Errorf("delete config entry: %d %v", code, out)
	}
	if code, _ := apiDo(t, "DELETE", api+"/viaapi", "", testToken); code != 200 {
		t.Errorf("delete: %d", code)
	}
	if _, ok := h.mgr.Get("viaapi"); ok {
		t.Error("deleted upstream still runs")
	}
	// Operations endpoints.
	code, out = apiDo(t, "GET", srv.URL+"/readyz", "", testToken)
	if code != 200 || fmt.Sprint(out["upstreams"]) != "map[connected:1 total:1]" {
		t.Errorf("readyz: %d %v", code, out)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", auth[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{"mcphub_upstream_state", "mcphub_catalog_items", "mcphub_catalog_shadowed", "mcphub_sessions_active", "go_goroutines"} {
		if !bytes.Contains(metrics, []byte(m)) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
}

// TestAllowedServerNamesAdmin: the allowlist also holds for the admin API
// and for registrations already in the store.
func TestAllowedServerNamesAdmin(t *testing.T) {
	h, srv := startHTTPHubOpts(t, &Options{AllowedServerNames: []string{"cfg", "ok"}}, nil, fixtureSpec("cfg", "-only", "echo"))
	api := srv.URL + "/api/servers"
	body := fmt.Sprintf(`{"name":"other","command":%q,"args":["-only","pid"]}`, fixture)
	if code, out := apiDo(t, "POST", api, body, testToken); code != 403 || out["error"] != "PERMISSION_DENIED" || !strings.Contains(fmt.Sprint(out["message"]), "allowedServerNames") {
		t.Errorf("add of a name not allowed: %d %v", code, out)
	}
	// A registration another process stored is not run.
	st := h.opts.Store
	spec := fixtureSpec("stored", "-only", "pid")
	if _, err := st.Create(t.Context(), upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true,
		Source: upstream.SourceCLI, Approval: upstream.ApprovalApproved, ApprovedHash: spec.Fingerprint()}); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Manager().Get("stored"); ok {
		t.Error("a stored registration whose name is not allowed was started")
	}
}
