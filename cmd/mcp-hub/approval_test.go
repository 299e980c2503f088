package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// markerScript is a stdio upstream that appends the value of the
// environment variable v to marker each time it starts, then serves the
// fixture with one tool, NAME_tool.
func markerScript(v, marker, name string) []string {
	return []string{"-c", fmt.Sprintf(`printf '%%s\n' "$%s" >> '%s'; exec '%s' -only pid -extra %s_tool`, v, marker, fixtureBin, name)}
}

// markerLines reads a marker file's lines.
func markerLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// Issue 12 (A20): hub_update_server changing the value of a variable that
// changes what code loads (NODE_OPTIONS, LD_PRELOAD, PYTHONPATH, PATH) on an
// approved stdio upstream leaves it pending: it stops, nothing starts with
// the new value, and mcp-hub approve shows the value in full before it
// runs.
func TestAdminEnvValueEditNeedsApproval(t *testing.T) {
	data := t.TempDir()
	cases := []struct{ name, v, before, after string }{
		{"nodeopts", "NODE_OPTIONS", "--max-old-space-size=256", "--require " + filepath.Join(data, "evil.js")},
		{"preload", "LD_PRELOAD", "", filepath.Join(data, "evil.so")},
		{"pypath", "PYTHONPATH", "/opt/ok", filepath.Join(data, "evil")},
		{"path", "PATH", "/usr/bin:/bin", filepath.Join(data, "evil-bin") + ":/usr/bin:/bin"},
	}
	for _, tc := range cases {
		args := append([]string{"add", tc.name, "--env", tc.v + "=" + tc.before, "--", "sh"}, markerScript(tc.v, filepath.Join(data, tc.name+".log"), tc.name)...)
		if out, code := cli(t, data, args...); code != 0 {
			t.Fatalf("add %s: %s", tc.name, out)
		}
	}
	a := startAdminHub(t, data, "", nil) // no elicitation: changes wait for mcp-hub approve
	for _, tc := range cases {
		a.waitTool(tc.name+"_tool", true, 20*time.Second)
	}
	for _, tc := range cases {
		marker := filepath.Join(data, tc.name+".log")
		if got := markerLines(t, marker); !slices.Equal(got, []string{tc.before}) {
			t.Fatalf("%s: marker after the approved start = %q", tc.name, got)
		}
		text, sc, isErr := a.call("hub_update_server", map[string]any{"name": tc.name, "env": map[string]any{tc.v: tc.after}})
		shown := fmt.Sprintf("%s = %q (literal, shown in full)", tc.v, tc.after)
		if isErr || sc["approval"] != "pending" || !strings.Contains(text, shown) {
			t.Fatalf("%s: hub_update_server = %q %v; want pending, showing %s", tc.name, text, sc, shown)
		}
		a.waitTool(tc.name+"_tool", false, 10*time.Second)
		if _, got, _ := a.call("hub_get_server", map[string]any{"name": tc.name}); got["server"].(map[string]any)["state"] == "CONNECTED" {
			t.Errorf("%s: connected after an unapproved change", tc.name)
		}
	}
	out, _ := cli(t, data, "list")
	for _, tc := range cases {
		if !strings.Contains(out, tc.name) || strings.Count(out, "pending") < len(cases) {
			t.Errorf("mcp-hub list does not show %s pending:\n%s", tc.name, out)
		}
	}
	time.Sleep(2 * time.Second) // longer than the hub's store poll
	for _, tc := range cases {
		if got := markerLines(t, filepath.Join(data, tc.name+".log")); !slices.Equal(got, []string{tc.before}) {
			t.Fatalf("%s ran with the unapproved value: marker = %q", tc.name, got)
		}
	}
	for _, tc := range cases {
		out, code := cli(t, data, "approve", tc.name, "--yes")
		want := []string{
			fmt.Sprintf("      %s = %q (literal, shown in full)", tc.v, tc.after),
			fmt.Sprintf("    ⚠ environment variable %s changes what code the program loads", tc.v),
		}
		for _, w := range want {
			if !slices.Contains(strings.Split(out, "\n"), w) {
				t.Errorf("mcp-hub approve %s: no line %q in:\n%s", tc.name, w, out)
			}
		}
		if code != 0 {
			t.Fatalf("approve %s: %d", tc.name, code)
		}
	}
	for _, tc := range cases {
		a.waitTool(tc.name+"_tool", true, 20*time.Second)
		if got := markerLines(t, filepath.Join(data, tc.name+".log")); !slices.Equal(got, []string{tc.before, tc.after}) {
			t.Errorf("%s: marker after approval = %q", tc.name, got)
		}
	}
}

// Issue 12 item 2: the elicitation shows where each value comes from, and
// a change of a value asks again.
func TestAdminElicitationShowsValues(t *testing.T) {
	data := t.TempDir()
	a := startAdminHub(t, data, "", func(string) string { return "accept" })
	text, sc, _ := a.call("hub_add_server", map[string]any{"name": "vals", "command": fixtureBin, "args": fixtureArgs(data, "vals"),
		"env": map[string]any{"API_KEY": "s3cret-value", "NODE_OPTIONS": "--max-old-space-size=256", "TOKEN": "${GH_TOKEN}", "CERT": "file:/etc/ssl/c.pem", "AUTH": "Bearer ${T}"}})
	if sc["approval"] != "approved" { // it fails to start: GH_TOKEN and T are not set
		t.Fatalf("add: %q %v", text, sc)
	}
	a.mu.Lock()
	msg := a.elicits[0]
	a.mu.Unlock()
	for _, want := range []string{
		"  API_KEY = <literal value, masked>",
		`  NODE_OPTIONS = "--max-old-space-size=256" (literal, shown in full)`,
		"  TOKEN = the hub's environment variable GH_TOKEN",
		"  CERT = contents of /etc/ssl/c.pem",
		"  AUTH = <literal text, masked> + the hub's environment variable T",
		"⚠ environment variable NODE_OPTIONS changes what code the program loads",
	} {
		if !slices.Contains(strings.Split(msg, "\n"), want) {
			t.Errorf("no line %q in the elicitation:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "s3cret-value") {
		t.Errorf("the elicitation shows a secret:\n%s", msg)
	}
	// Changing a value (and nothing else) asks again.
	if _, sc, _ := a.call("hub_update_server", map[string]any{"name": "vals", "env": map[string]any{"API_KEY": "s3cret-other"}}); sc["approval"] != "approved" {
		t.Errorf("update = %v", sc)
	}
	a.mu.Lock()
	asked := len(a.elicits)
	a.mu.Unlock()
	if asked != 2 {
		t.Errorf("a changed env value asked %d time(s) in all, want 2", asked)
	}
}

// Issue 12: a stored env value edited in SQLite behind the hub's back is
// never run; the registration goes back to pending, saying why.
func TestAdminTamperedEnvValue(t *testing.T) {
	data := t.TempDir()
	marker := filepath.Join(data, "victim.log")
	out, code := cli(t, data, append([]string{"add", "victim", "--env", "NODE_OPTIONS=--max-old-space-size=256", "--", "sh"}, markerScript("NODE_OPTIONS", marker, "victim")...)...)
	if code != 0 {
		t.Fatalf("add: %s", out)
	}
	// add's confirmation is the approval prompt's text.
	for _, want := range []string{`      NODE_OPTIONS = "--max-old-space-size=256" (literal, shown in full)`,
		"    ⚠ it runs a shell: anything in its arguments runs as a command"} {
		if !slices.Contains(strings.Split(out, "\n"), want) {
			t.Errorf("mcp-hub add: no line %q in:\n%s", want, out)
		}
	}
	a := startAdminHub(t, data, "", nil)
	a.waitTool("victim_tool", true, 10*time.Second)

	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "hub.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	evil := "--require " + filepath.Join(data, "evil.js")
	if _, err := db.Exec(`UPDATE upstreams SET config = json_set(config, '$.env.NODE_OPTIONS', ?) WHERE name = 'victim'`, evil); err != nil {
		t.Fatal(err)
	}
	a.waitTool("victim_tool", false, 10*time.Second)
	r, err := openTestStore(t, data).Get(context.Background(), "victim")
	if err != nil || r.Approval != upstream.ApprovalPending || r.ApprovalNote != upstream.NoteChangedSinceApproval {
		t.Errorf("after tampering: %q (%q), %v; want pending, noting the change", r.Approval, r.ApprovalNote, err)
	}
	list, _, _ := a.call("hub_list_servers", nil)
	if !strings.Contains(list, "pending ("+upstream.NoteChangedSinceApproval+")") {
		t.Errorf("hub_list_servers:\n%s", list)
	}
	time.Sleep(2 * time.Second)
	a.close()
	b := startAdminHub(t, data, "", nil)
	time.Sleep(time.Second)
	if slices.Contains(b.tools(), "victim_tool") {
		t.Error("the tampered spec runs after a restart")
	}
	if got := markerLines(t, marker); !slices.Equal(got, []string{"--max-old-space-size=256"}) {
		t.Errorf("the tampered value ran: marker = %q", got)
	}
}

// legacyStore writes dataDir/hub.db at schema version 3 (before approvals
// covered values) holding regs, approved ones with the old hash.
func legacyStore(t *testing.T, dataDir string, regs ...upstream.Registration) {
	t.Helper()
	path := filepath.Join(dataDir, "hub.db")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	migs, _ := filepath.Glob("../../persist/migrations/000[123]_*.sql")
	if len(migs) != 3 {
		t.Fatalf("migrations 1-3: %v", migs)
	}
	for _, m := range migs {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(b)); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	if _, err := db.Exec("PRAGMA user_version = 3"); err != nil {
		t.Fatal(err)
	}
	for i, r := range regs {
		config, _ := json.Marshal(r.Spec)
		hash := ""
		if r.Approval == upstream.ApprovalApproved {
			hash = r.Spec.Launch().LegacyHash()
		}
		if _, err := db.Exec(`INSERT INTO upstreams (id, name, description, transport, config, enabled, auto_connect, source, approval, approved_hash, created_at, updated_at)
			VALUES (?, ?, '', ?, ?, 1, 1, ?, ?, ?, '2025-01-02T03:04:05.000000000Z', '2025-01-02T03:04:05.000000000Z')`,
			fmt.Sprintf("00000000-0000-4000-8000-%012d", i), r.Spec.Name, string(r.Spec.InferTransport()), string(config),
			string(r.Source), string(r.Approval), hash); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 12: an approval stored before approvals covered values, for a
// server with env values nobody was shown, is pending with a reason that
// every view shows; one without values keeps its approval and runs.
func TestLegacyApprovalRechecked(t *testing.T) {
	data := t.TempDir()
	valued := upstream.Spec{Name: "valued", Transport: upstream.TransportStdio, Command: fixtureBin,
		Args: []string{"-only", "pid", "-extra", "valued_tool", "-pid-file", filepath.Join(data, "valued.pid")},
		Env:  map[string]string{"API_KEY": "k-123"}}
	plain := upstream.Spec{Name: "plainold", Transport: upstream.TransportStdio, Command: fixtureBin, Args: []string{"-only", "pid", "-extra", "plainold_tool"}}
	legacyStore(t, data,
		upstream.Registration{Spec: valued, Source: upstream.SourceAdmin, Approval: upstream.ApprovalApproved},
		upstream.Registration{Spec: plain, Source: upstream.SourceAdmin, Approval: upstream.ApprovalApproved})
	const note = upstream.NotePredatesValueReview

	a := startAdminHub(t, data, "", nil)
	a.waitTool("plainold_tool", true, 10*time.Second)
	list, lsc, _ := a.call("hub_list_servers", nil)
	if !strings.Contains(list, "valued (stdio): PENDING, 0 tools, source admin, pending ("+note+")") {
		t.Errorf("hub_list_servers:\n%s", list)
	}
	if !strings.Contains(fmt.Sprint(lsc["servers"]), "approvalNote:"+note) {
		t.Errorf("hub_list_servers structured: %v", lsc["servers"])
	}
	get, gsc, _ := a.call("hub_get_server", map[string]any{"name": "valued"})
	if !strings.Contains(get, "approval: pending ("+note+")") || !strings.Contains(get, "API_KEY = <literal value, masked>") || strings.Contains(get, "k-123") {
		t.Errorf("hub_get_server:\n%s", get)
	}
	if view, _ := gsc["server"].(map[string]any); view["approvalNote"] != note {
		t.Errorf("hub_get_server structured: %v", gsc["server"])
	}
	if out, _ := cli(t, data, "list"); !strings.Contains(out, "pending: "+note) {
		t.Errorf("mcp-hub list:\n%s", out)
	}
	if out, _ := cli(t, data, "doctor"); !strings.Contains(out, "not approved (pending: "+note+")") {
		t.Errorf("mcp-hub doctor:\n%s", out)
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(data, "valued.pid")); err == nil || slices.Contains(a.tools(), "valued_tool") {
		t.Fatal("the registration whose values nobody reviewed ran")
	}
	out, code := cli(t, data, "approve", "valued", "--yes")
	if code != 0 || !strings.Contains(out, "("+note+")") || !strings.Contains(out, "API_KEY = <literal value, masked>") {
		t.Fatalf("approve: %d\n%s", code, out)
	}
	a.waitTool("valued_tool", true, 10*time.Second)
	if out, _ := cli(t, data, "list"); strings.Contains(out, note) {
		t.Errorf("the note outlived the approval:\n%s", out)
	}
}
