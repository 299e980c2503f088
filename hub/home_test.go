package hub

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// What a person is told to change about a server that fails says where the
// server is defined: a refused redirect and the hints of a failure name the
// config file for a server of the file (edited there, which is its
// approval), and the store's commands, on the store this hub serves, for
// one of the store. On the old code a refused redirect said "change its
// url to the new address (mcp-hub add, the REST API or hub_update_server)"
// for both, which is wrong for the file's (mcp-hub add refuses its name,
// hub_update_server says it is CONFIG_MANAGED), and the hints said where
// for neither.
func TestMessagesSayWhereAServerIsDefined(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other origin got %s %s", r.Method, r.URL)
	}))
	t.Cleanup(other.Close)
	ou, _ := url.Parse(other.URL)
	movedTo := "http://localhost:" + ou.Port() + "/mcp"
	rd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, movedTo, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(rd.Close)

	const file = "/etc/mcp-hub/hub.yaml"
	command := func(sub string) string { return "./bin/mcp-hub " + sub + " --data-dir /srv/hub" }
	h, _ := startHTTPHubOpts(t, &Options{ConfigFile: file, Command: command}, nil,
		upstream.Spec{Name: "filemoved", URL: rd.URL + "/mcp"},
		upstream.Spec{Name: "filegone", Command: "no-such-program-pw3"})
	// As mcp-hub add does: from another process, through the store.
	st, err := persist.Open(t.Context(), filepath.Dir(h.opts.Store.(testStore).Path()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, spec := range []upstream.Spec{{Name: "storemoved", URL: rd.URL + "/mcp"}, {Name: "storegone", Command: "no-such-program-pw3"}} {
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		reg := upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true, Source: upstream.SourceCLI}
		reg.Approve() // as mcp-hub add registers it
		if _, err := st.Create(t.Context(), reg); err != nil {
			t.Fatal(err)
		}
	}
	failed := func(name string) *upstream.Upstream {
		var u *upstream.Upstream
		eventually(t, 15*time.Second, name+" failed", func() bool {
			var ok bool
			u, ok = h.Manager().Get(name)
			return ok && u.Status().Attempts > 0
		})
		return u
	}

	for _, tt := range []struct {
		name, want string
		hint       bool // in the hints, not the error
	}{
		{"filemoved", `If the server has moved there, change its url to the new address. "filemoved" is defined in /etc/mcp-hub/hub.yaml: edit its url there (a running hub applies the edit within seconds).`, false},
		{"storemoved", `If the server has moved there, change its url to the new address. "storemoved" is registered in the store: change its url with hub_update_server or PUT /api/servers/storemoved {"url": "NEW-URL"} and approve the change (./bin/mcp-hub approve --data-dir /srv/hub storemoved), or register it anew: ./bin/mcp-hub remove --data-dir /srv/hub storemoved, then ./bin/mcp-hub add --data-dir /srv/hub storemoved --url NEW-URL.`, false},
		{"filegone", `"filegone" is defined in /etc/mcp-hub/hub.yaml: edit its command there (a running hub applies the edit within seconds).`, true},
		{"storegone", `"storegone" is registered in the store: change its command with hub_update_server or PUT /api/servers/storegone {"command": "/absolute/path/to/no-such-program-pw3"} and approve the change (./bin/mcp-hub approve --data-dir /srv/hub storegone), or register it anew: ./bin/mcp-hub remove --data-dir /srv/hub storegone, then ./bin/mcp-hub add --data-dir /srv/hub storegone -- /absolute/path/to/no-such-program-pw3.`, true},
	} {
		u := failed(tt.name)
		got := u.Status().LastError
		if tt.hint {
			got = strings.Join(u.Hints(), "\n")
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s says:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
		if strings.Contains(got, "mcp-hub add,") || (strings.HasPrefix(tt.name, "file") && strings.Contains(got, "hub_update_server")) {
			t.Errorf("%s names a way to change it that does not apply: %s", tt.name, got)
		}
	}
	// A call's answer gives the hints too (failureText).
	if got := h.unknownToolText("nope"); !strings.Contains(got, `"filegone" is defined in /etc/mcp-hub/hub.yaml: edit its command there`) {
		t.Errorf("unknown tool answer: %s", got)
	}
}

// A hub without a store runs the config file's servers: their messages
// name the file too.
func TestMessagesSayWhereWithoutAStore(t *testing.T) {
	h, err := New(&Options{ConfigFile: "/etc/mcp-hub/hub.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if err := h.Start(t.Context(), []ConfigServer{{Spec: upstream.Spec{Name: "gone", Command: "no-such-program-pw3"}}}); err != nil {
		t.Fatal(err)
	}
	var u *upstream.Upstream
	eventually(t, 15*time.Second, "gone failed", func() bool {
		var ok bool
		u, ok = h.Manager().Get("gone")
		return ok && u.Status().State == upstream.StateFailed
	})
	if got := strings.Join(u.Hints(), "\n"); !strings.Contains(got, `"gone" is defined in /etc/mcp-hub/hub.yaml: edit its command there`) {
		t.Errorf("hints: %s", got)
	}
}
