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

// A refused redirect says where to change the server's url: in the config
// file for a server of the file (edited there, which is its approval), with
// the store's commands, on the store this hub serves, for one of the store.
// On the old code it said "change its url to the new address (mcp-hub add,
// the REST API or hub_update_server)" for both, which is wrong for the
// file's: mcp-hub add refuses its name, hub_update_server says it is
// CONFIG_MANAGED.
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
		upstream.Spec{Name: "filemoved", URL: rd.URL + "/mcp"})
	// As mcp-hub add does: from another process, through the store.
	st, err := persist.Open(t.Context(), filepath.Dir(h.opts.Store.(testStore).Path()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, spec := range []upstream.Spec{{Name: "storemoved", URL: rd.URL + "/mcp"}} {
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
	}{
		{"filemoved", `If the server has moved there, change its url to the new address. "filemoved" is defined in /etc/mcp-hub/hub.yaml: edit its url there (a running hub applies the edit within seconds).`},
		{"storemoved", `If the server has moved there, change its url to the new address. "storemoved" is registered in the store: change its url with hub_update_server or PUT /api/servers/storemoved {"url": "NEW-URL"} and approve the change (./bin/mcp-hub approve --data-dir /srv/hub storemoved), or register it anew: ./bin/mcp-hub remove --data-dir /srv/hub storemoved, then ./bin/mcp-hub add --data-dir /srv/hub storemoved --url NEW-URL.`},
	} {
		u := failed(tt.name)
		got := u.Status().LastError
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s says:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
		if strings.Contains(got, "mcp-hub add,") || (strings.HasPrefix(tt.name, "file") && strings.Contains(got, "hub_update_server")) {
			t.Errorf("%s names a way to change it that does not apply: %s", tt.name, got)
		}
	}
}
