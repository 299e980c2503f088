package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// corruptRow writes config into the spec column of a stored registration
// with database/sql, behind the store's back.
func corruptRow(t *testing.T, dataDir, name, config string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dataDir, "hub.db")+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec(`UPDATE upstreams SET config = ? WHERE name = ?`, config, name)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("no stored row named %s", name)
	}
}

// TestCorruptStoredRow: a stored registration whose row cannot be decoded
// does not stop the hub: the hub starts and serves the others, lists the
// broken one as FAILED with the decode error (hub_list_servers, list,
// status, doctor), and remove (the command and hub_remove_server) removes
// it.
func TestCorruptStoredRow(t *testing.T) {
	data := t.TempDir()
	for _, name := range []string{"good", "garbled", "pigeon"} {
		if out, code := cli(t, data, append([]string{"add", name, "--", fixtureBin}, anyToStrings(fixtureArgs(data, name))...)...); code != 0 {
			t.Fatalf("add %s: %s", name, out)
		}
	}
	corruptRow(t, data, "garbled", `{"name":"garbled","transport":"stdio","comm`)
	corruptRow(t, data, "pigeon", fmt.Sprintf(`{"name":"pigeon","transport":"carrier-pigeon","command":%q}`, fixtureBin))

	a := startAdminHub(t, data, "", nil)
	a.waitTool("good_tool", true, 20*time.Second)
	for _, tool := range []string{"garbled_tool", "pigeon_tool"} {
		if strings.Contains(strings.Join(a.tools(), ","), tool) {
			t.Errorf("%s is served: a broken registration ran", tool)
		}
	}
	text, sc, isErr := a.call("hub_list_servers", nil)
	if isErr {
		t.Fatalf("hub_list_servers: %s", text)
	}
	states := map[string]string{}
	servers, _ := sc["servers"].([]any)
	for _, s := range servers {
		v, _ := s.(map[string]any)
		states[fmt.Sprint(v["name"])] = fmt.Sprint(v["state"]) + " " + fmt.Sprint(v["lastError"])
	}
	for name, want := range map[string]string{"garbled": "not valid JSON", "pigeon": `unknown transport "carrier-pigeon"`} {
		if st := states[name]; !strings.HasPrefix(st, "FAILED ") || !strings.Contains(st, "cannot be decoded") || !strings.Contains(st, want) {
			t.Errorf("hub_list_servers shows %s as %q; want FAILED with the decode error (%s)", name, st, want)
		}
		if !strings.Contains(text, name+" (unknown): FAILED") {
			t.Errorf("hub_list_servers text lacks %s as FAILED:\n%s", name, text)
		}
	}
	if !strings.HasPrefix(states["good"], "CONNECTED") {
		t.Errorf("good: %q, want CONNECTED", states["good"])
	}

	// The command line shows it too.
	out, code := cli(t, data, "list")
	if code != 0 || !lineHas(out, "garbled", "FAILED", "not valid JSON") || !lineHas(out, "pigeon", "FAILED", "carrier-pigeon") || !lineHas(out, "good", "approved") {
		t.Errorf("list (exit %d):\n%s", code, out)
	}
	if out, code := cli(t, data, "status"); code != 0 || !lineHas(out, "garbled", "FAILED", "cannot be decoded") {
		t.Errorf("status (exit %d):\n%s", code, out)
	}
	if out, code := cli(t, data, "doctor"); code != 1 || !lineHas(out, "garbled", "FAILED") || !strings.Contains(out, "not valid JSON") || !lineHas(out, "good", "ok") {
		t.Errorf("doctor (exit %d, want 1):\n%s", code, out)
	}

	// Removal: by the command line, and by the admin tool.
	if out, code := cli(t, data, "remove", "garbled"); code != 0 || !strings.Contains(out, "Removed") {
		t.Fatalf("remove garbled (exit %d): %s", code, out)
	}
	if text, _, isErr := a.call("hub_remove_server", map[string]any{"name": "pigeon"}); isErr || !strings.Contains(text, "Removed") {
		t.Fatalf("hub_remove_server pigeon: %s", text)
	}
	out, _ = cli(t, data, "list")
	if strings.Contains(out, "garbled") || strings.Contains(out, "pigeon") || !strings.Contains(out, "good") {
		t.Errorf("list after the removals:\n%s", out)
	}
	if out, code := cli(t, data, "remove", "garbled"); code == 0 || !strings.Contains(out, "no upstream named") {
		t.Errorf("second remove (exit %d): %s", code, out)
	}
	// The hub still serves the good one.
	if !strings.Contains(strings.Join(a.tools(), ","), "good_tool") {
		t.Errorf("tools after the removals: %v", a.tools())
	}
}

// lineHas reports whether one line of out starts with name and contains
// every one of want.
func lineHas(out, name string, want ...string) bool {
	for line := range strings.SplitSeq(out, "\n") {
		if !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(line, w)
		}
		if ok {
			return true
		}
	}
	return false
}
