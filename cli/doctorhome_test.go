package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// doctor's hints say what to change where the server is defined: for one
// of the config file, edit it in that file; for one of the store, the
// running hub's hub_update_server and REST API, then mcp-hub approve, or
// mcp-hub remove and add, each naming the store looked at (--data-dir).
// A store server has no initTimeout of its own: its hint says to raise
// timeouts.initialize in the config file. On the old code both sources
// got the same hints, which said where for neither ("raise initTimeout
// (per server) or timeouts.initialize" for a server that can have none).
func TestDoctorHintsSayWhere(t *testing.T) {
	hang := []string{"-hang-initialize"}
	s := newSetup(t, "timeouts:\n  initialize: 1s\n  shutdownGrace: 200ms\n"+fixtureConfig("filehang", hang,
		"  filegone:\n    command: mcp-hub-test-no-such-pw3\n"+
			"  fileenv:\n    command: "+jsonString(fixtureBin)+"\n    env:\n      TOKEN: \"${PW3_UNSET_TOKEN}\"\n"))
	st := s.store(t)
	for _, spec := range []upstream.Spec{
		{Name: "storehang", Command: fixtureBin, Args: hang},
		{Name: "storegone", Command: "mcp-hub-test-no-such-pw3"},
		{Name: "storeenv", Command: fixtureBin, Env: map[string]string{"TOKEN": "${PW3_UNSET_TOKEN}"}},
	} {
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		r := upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true, Source: upstream.SourceCLI}
		r.Approve()
		if _, err := st.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	o := s.run(t, Doctor, "doctor")
	if o.code != ExitFail {
		t.Fatalf("doctor: %s", o)
	}
	cfg, d := s.config, s.data
	for _, want := range []string{
		`  hint:  it did not answer initialize within 1s: it may need other arguments, wait for input, or be slow to start; raise initTimeout of "filehang" in ` + cfg + ` (or timeouts.initialize, every server's)` + "\n",
		`  hint:  it did not answer initialize within 1s: it may need other arguments, wait for input, or be slow to start; raise timeouts.initialize in ` + cfg + ` (a server registered in the store has no initTimeout of its own)` + "\n",
		`a hub started by a client inherits the client's PATH. "filegone" is defined in ` + cfg + `: edit its command there (a running hub applies the edit within seconds).` + "\n",
		`a hub started by a client inherits the client's PATH. "storegone" is registered in the store: change its command with hub_update_server or PUT /api/servers/storegone {"command": "/absolute/path/to/mcp-hub-test-no-such-pw3"} and approve the change (mcp-hub approve --data-dir ` + d + ` storegone), or register it anew: mcp-hub remove --data-dir ` + d + ` storegone, then mcp-hub add --data-dir ` + d + ` storegone -- /absolute/path/to/mcp-hub-test-no-such-pw3.` + "\n",
		`or write the value into the server's env. "fileenv" is defined in ` + cfg + `: edit its env there (a running hub applies the edit within seconds).` + "\n",
		`or write the value into the server's env. "storeenv" is registered in the store: change its env with hub_update_server or PUT /api/servers/storeenv {"env": {"TOKEN": "VALUE"}} and approve the change (mcp-hub approve --data-dir ` + d + ` storeenv), or register it anew: mcp-hub remove --data-dir ` + d + ` storeenv, then mcp-hub add --data-dir ` + d + ` storeenv --env TOKEN=VALUE -- ` + fixtureBin + `.` + "\n",
	} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, o.stdout)
		}
	}
	if strings.Contains(o.stdout, "raise initTimeout (per server)") {
		t.Errorf("a hint does not say where:\n%s", o.stdout)
	}
}
