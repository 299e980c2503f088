package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// restCall sends one admin API request to a hub process.
func restCall(t *testing.T, method, url, body string, hdr map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
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

// TestHTTPNoAuthApproval: --http-no-auth covers MCP clients, not approval.
// With no token configured, approving over the REST API is refused with a
// pointer to mcp-hub approve; with http.token, it needs that token. A web
// page's text/plain or cross-origin POST never registers anything.
func TestHTTPNoAuthApproval(t *testing.T) {
	const tok = "no-auth-approval-token-0123456789"
	for _, tt := range []struct {
		name string
		cfg  string
	}{
		{"no token", ""},
		{"http.token", "http:\n  token: " + tok + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			_, base := startHTTPProc(t, data, tt.cfg, "--http-no-auth")
			api := base + "/api/servers"
			body := fmt.Sprintf(`{"name":"viaweb","command":%q,"args":["-only","echo"]}`, fixtureBin)
			if code, out := restCall(t, "POST", api, body, map[string]string{"Content-Type": "text/plain"}); code != 415 {
				t.Errorf("text/plain POST: %d %v, want 415", code, out)
			}
			if code, out := restCall(t, "POST", api, body, map[string]string{"Content-Type": "application/json", "Origin": "http://localhost:1"}); code != 403 {
				t.Errorf("cross-origin POST: %d %v, want 403", code, out)
			}
			if out, _ := cli(t, data, "list"); strings.Contains(out, "viaweb") {
				t.Fatalf("a web page's POST registered a server:\n%s", out)
			}
			jsonCT := map[string]string{"Content-Type": "application/json"}
			if code, out := restCall(t, "POST", api, body, jsonCT); code != 201 || out["approval"] != "pending" {
				t.Fatalf("no-auth JSON POST: %d %v, want 201 pending", code, out)
			}
			code, out := restCall(t, "POST", api+"/viaweb/approve", "", nil)
			if tt.cfg == "" {
				if code != 403 || !strings.Contains(fmt.Sprint(out["message"]), "mcp-hub approve --data-dir "+data+" viaweb") {
					t.Errorf("approve with no token configured: %d %v, want 403 pointing to mcp-hub approve", code, out)
				}
			} else if code != 401 || !strings.Contains(fmt.Sprint(out["message"]), "needs the bearer token") {
				t.Errorf("approve without the token: %d %v, want 401", code, out)
			}
			if out, _ := cli(t, data, "list"); !lineHas(out, "viaweb", "pending") {
				t.Fatalf("approved without the token:\n%s", out)
			}
			if tt.cfg == "" {
				return
			}
			withTok := map[string]string{"Authorization": "bearer " + tok, "Content-Type": "application/json"}
			_, shown := restCall(t, "GET", api+"/viaweb", "", withTok)
			if code, out := restCall(t, "POST", api+"/viaweb/approve", fmt.Sprintf(`{"digest":%q}`, shown["digest"]), withTok); code != 200 {
				t.Errorf("approve with the token: %d %v", code, out)
			}
			if out, _ := cli(t, data, "list"); !lineHas(out, "viaweb", "approved") {
				t.Errorf("not approved with the token:\n%s", out)
			}
		})
	}
}
