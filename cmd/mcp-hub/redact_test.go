package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// Planted secrets: each is distinctive, so that finding it anywhere is a
// leak, and at least 8 bytes long, so that the hub scrubs it wherever an
// upstream echoes it.
const (
	plantQuery  = "q-planted-7e1d"    // a URL query value
	plantAPIKey = "k-planted-2b8f"    // --api-key=VALUE
	plantToken  = "t-planted-9c3a"    // --token VALUE
	plantEnv    = "e-planted-5d6e"    // an env value, echoed by the upstream
	plantHeader = "h-planted-1a4b"    // a header value
	plantDown   = "d-planted-8f2c"    // the query of a URL nothing answers at
	plantEcho   = "g-planted-5e3d"    // a header value a server echoes in its 401 body
	plantPendT  = "v-planted-2f6a"    // --token VALUE of a registration waiting for approval
	plantPendK  = "w-planted-7b1c"    // --api-key=VALUE of one
	plantUser   = "u-planted-6b0e"    // an argument URL's password
	plantAssign = "a-planted-3c7f"    // NAME=VALUE argument with a secret-looking name
	plantDBPass = "p-planted-0d9a"    // -pVALUE of a mysql-like command (a symlink to the fixture)
	plantHeadFl = "f-planted-4e2b"    // --header "Name: VALUE"
	echoPrefix  = "PLANTED_VALUE="    // what the upstream prints before its env value
	assignName  = "FIXTURE_API_TOKEN" // the NAME of plantAssign
)

// plantLong is an env value longer than the lines the hub keeps or shows
// whole: the stdout line that prints it is cut at 200 bytes, the stderr
// line at 2048; what is left of it must not show either.
var plantLong = "l-planted-" + strings.Repeat("0123456789abcdef", 190)

var planted = []string{plantQuery, plantAPIKey, plantToken, plantEnv, plantHeader, plantDown, plantUser, plantAssign, plantDBPass, plantHeadFl, plantEcho, plantPendT, plantPendK, plantLong[:24]}

// startHTTPFixtureProc starts the fixture serving streamable HTTP and
// returns its endpoint URL.
func startHTTPFixtureProc(t *testing.T) string {
	t.Helper()
	return testbin.Listen(t, testLogWriter{t}, fixtureBin, "-transport", "http", "-only", "echo")
}

// TestNoSecretInAnyOutput plants secrets in every place a spec can hold one
// (a URL query, --api-key=, --token, an env value the upstream prints on
// stdout and stderr, a header value, the query of a URL nothing answers at,
// an argument URL's password, NAME=VALUE and --header arguments, mysql's
// -pVALUE) and searches every output of the hub for them: the admin tools
// (text and structured content), the REST API, list, status, export,
// doctor and the hub's log at debug level, with go-retryablehttp retrying
// against a server that answers 503 first. Only export --reveal may show
// them.
func TestNoSecretInAnyOutput(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	target, _ := url.Parse(startHTTPFixtureProc(t))
	target.Path = "" // the proxy appends the request's path
	var refused atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/deny" {
			http.Error(w, "invalid key "+r.Header.Get("X-Api-Key"), http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && refused.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	mysql := dir + "/mysql"
	if err := os.Symlink(fixtureBin, mysql); err != nil {
		t.Fatal(err)
	}
	token := strings.Repeat("z", 40)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cfgPath := writeFile(t, "hub.yaml", fmt.Sprintf(`
http:
  token: %[1]s
timeouts:
  shutdownGrace: 500ms
servers:
  sec-stdio:
    command: %[2]s
    args: ["-only", "echo", "-echo-env", "PLANTED_VALUE", "--", "--api-key=%[3]s", "--token", "%[4]s",
           "postgres://admin:%[5]s@127.0.0.1:1/db", "%[6]s=%[7]s", "--header", "X-Key: %[8]s"]
    env: {PLANTED_VALUE: %[9]s}
  sec-mysql:
    command: %[10]s
    args: ["-only", "pid", "--", "-p%[11]s"]
  sec-exits:
    command: %[2]s
    args: ["-echo-env", "PLANTED_VALUE", "-exit-immediately"]
    env: {PLANTED_VALUE: %[9]s}
  sec-long:
    command: %[2]s
    args: ["-only", "add", "-echo-env", "LONG_VALUE"]
    env: {LONG_VALUE: %[15]s}
  sec-http:
    url: %[12]s
    headers: {X-Api-Key: %[13]s}
  sec-down:
    url: %[14]s
  sec-deny:
    url: %[16]s
    headers: {X-Api-Key: %[17]s}
`, token, fixtureBin, plantAPIKey, plantToken, plantUser, assignName, plantAssign, plantHeadFl, plantEnv,
		mysql, plantDBPass, q(front.URL+"/mcp?key="+plantQuery), plantHeader, q("http://127.0.0.1:1/mcp?key="+plantDown), plantLong,
		q(front.URL+"/deny"), plantEcho))

	hub := startRaw(t, []string{"MCP_HUB_CONFIG="}, hubBin, "--data-dir", data, "--config", cfgPath,
		"--http", "127.0.0.1:0", "--stdio", "--log-level", "debug")
	var base string
	waitFor(t, 20*time.Second, "the HTTP address in the log", func() bool {
		if m := streamableRE.FindStringSubmatch(hub.stderr.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	})
	hub.initialize()
	call := func(tool string, args string) string {
		t.Helper()
		m := hub.call("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
		if m.Error != nil {
			t.Fatalf("%s: %s", tool, m.Error)
		}
		return string(m.Result)
	}
	// Every upstream has run: connected, or failed with its error recorded.
	want := map[string]string{"sec-stdio": "CONNECTED", "sec-mysql": "CONNECTED", "sec-long": "CONNECTED", "sec-http": "CONNECTED", "sec-exits": "FAILED", "sec-down": "FAILED", "sec-deny": "FAILED"}
	waitFor(t, 30*time.Second, "every upstream connected or failed", func() bool {
		var res struct {
			StructuredContent struct {
				Servers []struct{ Name, State string }
			}
		}
		_ = json.Unmarshal([]byte(call("hub_list_servers", "{}")), &res)
		n := 0
		for _, s := range res.StructuredContent.Servers {
			if want[s.Name] == s.State {
				n++
			}
		}
		return n == len(want)
	})
	if refused.Load() < 2 {
		t.Fatalf("the front answered %d POSTs; want a 503 and a retry", refused.Load())
	}
	waitFor(t, 10*time.Second, "the echoed env value in the stderr tail", func() bool {
		return strings.Contains(call("hub_get_server", `{"name":"sec-stdio"}`), echoPrefix)
	})

	outputs := map[string]string{"hub_list_servers": call("hub_list_servers", "{}")}
	for _, name := range []string{"sec-deny", "sec-down"} {
		outputs["hub_restart_server "+name] = call("hub_restart_server", fmt.Sprintf(`{"name":%q}`, name))
	}
	for name := range want {
		outputs["hub_get_server "+name] = call("hub_get_server", fmt.Sprintf(`{"name":%q}`, name))
	}
	restDo := func(method, path, body string, status int) string {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return string(b)
	}
	rest := func(path string) string { return restDo(http.MethodGet, path, "", http.StatusOK) }
	// Registrations waiting for approval: what they would run is shown.
	pending := func(name string) string {
		return fmt.Sprintf(`{"name":%q,"command":%q,"args":["--","--token",%q,"--api-key=%s"],"env":{"PLANTED_VALUE":%q}}`,
			name, fixtureBin, plantPendT, plantPendK, plantEnv)
	}
	outputs["POST /api/servers"] = restDo(http.MethodPost, "/api/servers", pending("sec-pending"), http.StatusCreated)
	outputs["hub_add_server"] = call("hub_add_server", pending("sec-pending2"))
	for _, name := range []string{"sec-pending", "sec-pending2"} {
		want[name] = "PENDING"
		outputs["hub_get_server "+name] = call("hub_get_server", fmt.Sprintf(`{"name":%q}`, name))
	}
	outputs["GET /api/servers"] = rest("/api/servers")
	for name := range want {
		outputs["GET /api/servers/"+name] = rest("/api/servers/" + name)
	}
	for _, args := range [][]string{{"list"}, {"status"}, {"export"}, {"export", "--format", "yaml"}, {"doctor", "--log-level", "debug"}, {"approve", "sec-pending"}} {
		out, _ := cliConfig(t, data, cfgPath, args...)
		outputs["mcp-hub "+strings.Join(args, " ")] = out
	}
	reveal, _ := cliConfig(t, data, cfgPath, "export", "--reveal")
	hub.closeStdin(20 * time.Second)
	outputs["hub log (debug)"] = hub.stderr.String()

	// What each output must show, so that the search is not vacuous.
	shows := map[string][]string{
		"hub_get_server sec-stdio":         {"--api-key=***", "PLANTED_VALUE=***"},
		"hub_get_server sec-http":          {"key=***"},
		"hub_get_server sec-long":          {"LONG_VALUE=***…[truncated]"},
		"hub_get_server sec-deny":          {"HTTP 401 Unauthorized: invalid key ***"},
		"hub_get_server sec-pending":       {"--token '***' '--api-key=***'"},
		"hub_add_server":                   {"--token '***' '--api-key=***'"},
		"POST /api/servers":                {"--token '***' '--api-key=***'"},
		"mcp-hub approve sec-pending":      {"--token '***' '--api-key=***'"},
		"hub log (debug)":                  {"retrying request", "not JSON-RPC", "PLANTED_VALUE=***", `line="env LONG_VALUE=***…"`},
		"mcp-hub doctor --log-level debug": {"env PLANTED_VALUE=***"},
	}
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			out := outputs[name]
			for _, s := range planted {
				if i := strings.Index(out, s); i >= 0 {
					t.Errorf("secret %q shown: …%s…", s, out[max(0, i-120):min(len(out), i+len(s)+40)])
				}
			}
			for _, s := range shows[name] {
				if !strings.Contains(out, s) {
					t.Errorf("does not show %q:\n%s", s, out)
				}
			}
		})
	}
	t.Run("export --reveal", func(t *testing.T) {
		for _, s := range []string{plantQuery, plantAPIKey, plantToken, plantEnv, plantHeader} {
			if !strings.Contains(reveal, s) {
				t.Errorf("export --reveal does not show %q:\n%s", s, reveal)
			}
		}
	})
}
