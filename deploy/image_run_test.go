package deploy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The running half of TestImage: the image as a person runs it, with
// podman and the flags scripts/podman.sh run-flags finds this host needs
// (none where podman's defaults work). Every container mounts one of the
// test's named volumes at /data (so none leaves an anonymous volume
// behind), and every container and volume is removed at the end, failed
// or not; the end checks that none is left.

// imageVersion is the version TestImage builds the image with.
const imageVersion = "v9.9.9-test"

// containers runs one test's containers.
type containers struct {
	t     *testing.T
	tag   string
	flags []string // what podman run needs here, from scripts/podman.sh run-flags
	id    string   // in the name of each container and volume of this run
	names []string // containers made, for removal
	vols  []string // volumes made
}

// runContainers runs the image tag: --version; a stdio session through
// podman run -i; the default command serving HTTP on a loopback port with
// a token (health, MCP with the token, refusal without it, the user it
// runs as, registrations kept by the volume across containers and a
// restart, a clean stop on SIGTERM).
func runContainers(t *testing.T, dir, tag string) {
	cmd := exec.Command(filepath.Join(dir, "scripts", "podman.sh"), "run-flags", tag)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if refused(msg) {
			t.Logf("NOT RUN: podman cannot run containers on this machine, even with the flags scripts/podman.sh tries; the image's config and binary were checked outside it: %s", lastLine(msg))
			return
		}
		t.Fatalf("scripts/podman.sh run-flags: %v\n%s", err, tail(msg, 4000))
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "podman.sh:") { // what it installed, which flags it found
			t.Log(l)
		}
	}
	c := &containers{t: t, tag: tag, flags: strings.Fields(string(out)), id: randomHex(4)}
	t.Cleanup(c.removeAll)

	start := time.Now()
	t.Run("version", c.version)
	t.Run("stdio", c.stdio)
	t.Run("http", c.http)
	t.Logf("running the image took %v", time.Since(start).Round(time.Millisecond))

	c.removeAll()
	for _, what := range [][]string{
		{"ps", "-a", "--format", "{{.Names}}", "--filter", "name=" + c.name("")},
		{"volume", "ls", "--format", "{{.Name}}", "--filter", "name=" + c.name("")},
	} {
		if left, err := podmanOut(what...); err != nil || strings.TrimSpace(left) != "" {
			t.Errorf("podman %s after the test: %v %s", what[0], err, left)
		}
	}
}

// refused says whether podman's error is the kernel or sandbox refusing
// containers (not the image failing).
func refused(msg string) bool {
	for _, s := range []string{"Operation not permitted", "operation not permitted", "permission denied", "not supported"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func (c *containers) name(s string) string { return "mcp-hub-test-image-" + c.id + "-" + s }

// volume creates a named volume and returns its name.
func (c *containers) volume(s string) string {
	c.t.Helper()
	v := c.name(s)
	c.vols = append(c.vols, v)
	if out, err := podmanOut("volume", "create", v); err != nil {
		c.t.Fatalf("podman volume create: %v\n%s", err, out)
	}
	return v
}

// runArgs is podman's command line for `podman run` with this host's
// flags and a container of the given name: args are run's own flags, the
// image and its arguments.
func (c *containers) runArgs(name string, args ...string) []string {
	c.names = append(c.names, name)
	a := []string{"--storage-driver", "vfs", "run", "--name", name, "--pull", "never"}
	return append(append(a, c.flags...), args...)
}

func (c *containers) run(name string, args ...string) (string, error) {
	out, err := exec.Command("podman", c.runArgs(name, args...)...).CombinedOutput()
	return string(out), err
}

func (c *containers) removeAll() {
	for _, n := range c.names {
		_, _ = podmanOut("rm", "-f", "-v", "-t", "0", n)
	}
	for _, v := range c.vols {
		_, _ = podmanOut("volume", "rm", "-f", v)
	}
	c.names, c.vols = nil, nil
}

func (c *containers) version(t *testing.T) {
	vol := c.volume("version")
	out, err := c.run(c.name("version"), "--rm", "-v", vol+":/data", c.tag, "--version")
	if err != nil || !strings.Contains(out, imageVersion) {
		t.Errorf("podman run IMAGE --version: %v\n%s", err, out)
	}
}

// stdio is what an MCP client that launches the hub in a container does:
// podman run -i IMAGE serve, the session on stdin and stdout.
func (c *containers) stdio(t *testing.T) {
	vol := c.volume("stdio")
	stdioSession(t, exec.Command("podman", c.runArgs(c.name("stdio"), "-i", "--rm", "-v", vol+":/data", c.tag, "serve")...))
}

// http runs the image's default command (serve --http 0.0.0.0:7411
// --http-allow-remote) as a person deploys it.
func (c *containers) http(t *testing.T) {
	token := "image-test-token-" + randomHex(12) // planted: no log may show it
	vol := c.volume("data")

	// A registration made by another container on the volume, gone
	// before the hub starts.
	if out, err := c.run(c.name("add"), "--rm", "-v", vol+":/data", c.tag,
		"add", "docs", "--disabled", "--url", "http://127.0.0.1:9/mcp"); err != nil {
		t.Fatalf("podman run IMAGE add: %v\n%s", err, out)
	}

	srv := c.name("serve")
	if out, err := c.run(srv, "-d", "-p", "127.0.0.1::7411", "-v", vol+":/data",
		"-e", "MCP_HUB_HTTP__TOKEN="+token, c.tag); err != nil {
		t.Fatalf("podman run -d IMAGE: %v\n%s", err, out)
	}
	base := c.serving(t, srv)

	// MCP over /mcp with the token: a real client.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: 1,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "image-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("MCP over %s/mcp with the token: %v", base, err)
	}
	checkSession(t, ctx, cs)
	_ = cs.Close()

	// Without the token, or with another, nothing is served.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"image-test","version":"1"}}}`
	for _, tok := range []string{"", "not-the-token-0123456789"} {
		if code, body := httpDo("POST", base+"/mcp", tok, initialize); code != http.StatusUnauthorized {
			t.Errorf("POST /mcp with token %q: %d, want 401\n%s", tok, code, body)
		}
		if code, body := httpGet(base+"/api/servers", tok); code != http.StatusUnauthorized {
			t.Errorf("GET /api/servers with token %q: %d, want 401\n%s", tok, code, body)
		}
	}

	// It runs as the image's user, not root: inside (user) and on the
	// host (huser).
	if out, err := podmanOut("inspect", "--format", "{{.Config.User}}", srv); err != nil || strings.TrimSpace(out) != "65532:65532" {
		t.Errorf("the container's user: %v %q, want 65532:65532", err, out)
	}
	top, err := podmanOut("top", srv, "user", "huser", "pid", "args")
	if err != nil {
		t.Fatalf("podman top: %v\n%s", err, top)
	}
	rows := strings.Split(strings.TrimSpace(top), "\n")[1:]
	if len(rows) == 0 {
		t.Errorf("podman top lists no process:\n%s", top)
	}
	for _, row := range rows {
		f := strings.Fields(row)
		if len(f) < 4 || f[0] != "mcp-hub" || f[1] == "root" || f[1] == "0" {
			t.Errorf("a process of the container does not run as mcp-hub (uid 65532):\n%s", top)
		}
	}
	if len(rows) > 0 && !strings.Contains(rows[0], "/usr/local/bin/mcp-hub serve") {
		t.Errorf("the container's first process is not the hub:\n%s", top)
	}

	// One registration from the other container; one made through REST.
	if want := []string{"docs"}; !slices.Equal(servers(t, base, token), want) {
		t.Errorf("servers before REST: %v, want %v", servers(t, base, token), want)
	}
	if code, body := httpDo("POST", base+"/api/servers", token, `{"name":"web","url":"http://127.0.0.1:9/mcp"}`); code != http.StatusCreated {
		t.Fatalf("POST /api/servers: %d\n%s", code, body)
	}

	// podman stop sends SIGTERM: the hub shuts down and exits 0 within
	// the grace period (a SIGKILL would show as 137 and a warning).
	c.stop(t, srv)

	// The same container again, the same volume: both registrations.
	if out, err := podmanOut("start", srv); err != nil {
		t.Fatalf("podman start: %v\n%s", err, out)
	}
	base = c.serving(t, srv)
	if want := []string{"docs", "web"}; !slices.Equal(servers(t, base, token), want) {
		t.Errorf("servers after a restart: %v, want %v", servers(t, base, token), want)
	}
	c.stop(t, srv)

	logs, _ := podmanOut("logs", srv)
	if strings.Contains(logs, token) {
		t.Errorf("the container's log shows the token:\n%s", tail(logs, 4000))
	}
	if strings.Count(logs, "signal received; shutting down") != 2 {
		t.Errorf("the hub did not log two shutdowns on SIGTERM:\n%s", tail(logs, 4000))
	}
}

// serving waits for the container's hub to answer /healthz on its
// published loopback port and returns its base URL.
func (c *containers) serving(t *testing.T, name string) string {
	t.Helper()
	out, err := podmanOut("port", name, "7411")
	addr := strings.TrimSpace(lastLine(out))
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("podman port %s 7411: %v %q", name, err, out)
	}
	base := "http://" + addr
	start := time.Now()
	var code int
	var body string
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, body = httpGet(base+"/healthz", ""); code == http.StatusOK {
			break
		}
		if st, _ := podmanOut("inspect", "--format", "{{.State.Status}}", name); strings.TrimSpace(st) != "running" || time.Now().After(deadline) {
			logs, _ := podmanOut("logs", name)
			t.Fatalf("/healthz: %d %s (container %s)\n%s", code, body, strings.TrimSpace(st), tail(logs, 4000))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz answered %q", body)
	}
	if code, body := httpGet(base+"/readyz", ""); code != http.StatusOK || !strings.Contains(body, `"ready":true`) {
		t.Errorf("/readyz: %d %s", code, body)
	}
	t.Logf("%s served /healthz %v after podman returned", name, time.Since(start).Round(time.Millisecond))
	return base
}

// stop stops the container with podman stop and checks the hub exited by
// itself on SIGTERM.
func (c *containers) stop(t *testing.T, name string) {
	t.Helper()
	const grace = 30 // seconds; the hub needs well under one
	start := time.Now()
	out, err := podmanOut("stop", "-t", strconv.Itoa(grace), name)
	took := time.Since(start)
	if err != nil || strings.Contains(out, "SIGKILL") {
		t.Errorf("podman stop: %v\n%s", err, out)
	}
	st, err := podmanOut("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", name)
	if err != nil || strings.TrimSpace(st) != "exited 0" {
		logs, _ := podmanOut("logs", name)
		t.Errorf("after podman stop (grace %d s): %v %q, want exited 0\n%s", grace, err, st, tail(logs, 4000))
	}
	t.Logf("podman stop %s took %v", name, took.Round(time.Millisecond))
}

// servers lists the names of the registrations through REST.
func servers(t *testing.T, base, token string) []string {
	t.Helper()
	code, body := httpGet(base+"/api/servers", token)
	var list struct{ Servers []struct{ Name string } }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("GET /api/servers: %d\n%s", code, body)
	}
	var names []string
	for _, s := range list.Servers {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// stdioSession runs cmd as a stdio MCP server (the image's binary, or
// podman run -i) with a real client: initialize, tools/list, then closing
// stdin, on which the hub exits 0 by itself.
func stdioSession(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "image-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 30 * time.Second}, nil)
	if err != nil {
		t.Fatalf("stdio session with %s: %v\n%s", strings.Join(cmd.Args, " "), err, tail(stderr.String(), 4000))
	}
	checkSession(t, ctx, cs)
	if err := cs.Close(); err != nil {
		t.Errorf("%s on closing stdin: %v (want exit 0 without a signal)\n%s", strings.Join(cmd.Args, " "), err, tail(stderr.String(), 4000))
	}
}

// checkSession checks an initialized session with the image's hub: its
// version, and tools/list with the admin tools of an empty hub.
func checkSession(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	if v := cs.InitializeResult().ServerInfo; v == nil || v.Name != "mcp-hub" || v.Version != imageVersion {
		t.Errorf("initialize: server %+v, want mcp-hub %s", v, imageVersion)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "hub_list_servers") {
		t.Errorf("tools/list: %v, want the admin tools (hub_list_servers)", names)
	}
}

// bearer adds the hub's token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
