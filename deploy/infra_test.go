package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// The team tests run what deploy/README.md describes, on this machine:
// PostgreSQL (scripts/pg.sh, a server of their own, which they stop and
// start), mcp-hub replicas (the real binary, separate processes) and
// HAProxy with deploy/haproxy.cfg as shipped. make test-team runs them
// (MCPHUB_TEST_TEAM=1); make test skips them.

const (
	teamEnv   = "MCPHUB_TEST_TEAM"
	teamToken = "team-token-0123456789abcdef0123456789"
	// pgPassword is in the store URL the replicas get (the test server
	// trusts local connections and never asks for it): no log line or
	// answer may show it.
	pgPassword = "pg-s3cret-team"
)

func requireTeam(t *testing.T) {
	t.Helper()
	if os.Getenv(teamEnv) == "" {
		t.Skipf("SKIPPING the team test (3 mcp-hub replicas + HAProxy + PostgreSQL): run make test-team (it sets %s=1)", teamEnv)
	}
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Fatalf("haproxy is not installed (scripts/team-deps.sh installs it): %v", err)
	}
}

var root = sync.OnceValues(testbin.Root)

// binDir holds the binaries built for the run; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries builds mcp-hub and the fixture once per run.
var binaries = sync.OnceValues(func() ([2]string, error) {
	dir, err := os.MkdirTemp("", "mcp-hub-team-bin-")
	if err != nil {
		return [2]string{}, err
	}
	binDir = dir
	hub, err := testbin.Build(dir, "./cmd/mcp-hub")
	if err != nil {
		return [2]string{}, err
	}
	fixture, err := testbin.Build(dir, "./testdata/fixture")
	return [2]string{hub, fixture}, err
})

func bins(t *testing.T) (hub, fixture string) {
	t.Helper()
	b, err := binaries()
	if err != nil {
		t.Fatal(err)
	}
	return b[0], b[1]
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// postgres is a PostgreSQL server of the test's.
type postgres struct {
	t   *testing.T
	dir string
	dsn string // with pgPassword
}

func pgScript(t *testing.T, args ...string) string {
	t.Helper()
	r, err := root()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(r, "scripts", "pg.sh"), args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("scripts/pg.sh %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

func startPostgres(t *testing.T) *postgres {
	t.Helper()
	dir, err := os.MkdirTemp("", "mcp-hub-team-pg-")
	if err != nil {
		t.Fatal(err)
	}
	dsn := pgScript(t, "start", dir)
	t.Cleanup(func() { pgScript(t, "destroy", dir) })
	return &postgres{t: t, dir: dir, dsn: strings.Replace(dsn, "postgres://mcphub@", "postgres://mcphub:"+pgPassword+"@", 1)}
}

func (p *postgres) stop()  { pgScript(p.t, "stop", p.dir) }
func (p *postgres) start() { pgScript(p.t, "restart", p.dir) }

// replica is a running mcp-hub serving HTTP on the shared store.
type replica struct {
	name string
	addr string
	cmd  *exec.Cmd
	logs *testbin.Buffer
	done chan struct{}
}

func (r *replica) url() string { return "http://" + r.addr }

// teamConfig is the config file every replica runs (the same file: see
// deploy/README.md): one stdio upstream, which each replica runs itself.
func teamConfig(t *testing.T, fixture string) string {
	t.Helper()
	return testbin.WriteFile(t, "hub.yaml", fmt.Sprintf(`mcpServers:
  base:
    command: %q
    args: ["-only", "echo,pid"]
`, fixture))
}

// startReplica starts a replica and waits until it is ready.
func startReplica(t *testing.T, name, dsn, config string) *replica {
	t.Helper()
	hub, _ := bins(t)
	r := &replica{name: name, addr: freeAddr(t), logs: &testbin.Buffer{}, done: make(chan struct{})}
	data := t.TempDir()
	r.cmd = exec.Command(hub, "serve", "--http", r.addr, "--store", dsn, "--data-dir", data, "--config", config)
	r.cmd.Env = append(os.Environ(), "MCP_HUB_HTTP__TOKEN="+teamToken, "XDG_CONFIG_HOME="+data, "MCP_HUB_CONFIG_POLL=0")
	r.cmd.Stdout, r.cmd.Stderr = io.Discard, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(os.Interrupt)
		select {
		case <-r.done:
		case <-time.After(15 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("replica %s log (tail):\n%s", r.name, tail(r.logs.String(), 3000))
		}
	})
	waitFor(t, 30*time.Second, "replica "+name+" ready", func() bool {
		select {
		case <-r.done:
			t.Fatalf("replica %s exited: %s", name, tail(r.logs.String(), 2000))
		default:
		}
		code, _ := httpGet(r.url()+"/readyz", "")
		return code == 200
	})
	return r
}

// kill SIGKILLs the replica.
func (r *replica) kill() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// startHAProxy runs deploy/haproxy.cfg in front of the replicas (1 to 3;
// fewer fill the three slots in turn) and waits until every replica
// answers through it.
func startHAProxy(t *testing.T, reps ...*replica) string {
	t.Helper()
	r, err := root()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command("haproxy", "-db", "-f", filepath.Join(r, "deploy", "haproxy.cfg"))
	cmd.Env = append(os.Environ(), "MCP_HUB_LISTEN="+addr)
	for i := range 3 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("MCP_HUB_%d=%s", i+1, reps[i%len(reps)].addr))
	}
	logs := &testbin.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("haproxy log (tail):\n%s", tail(logs.String(), 3000))
		}
	})
	lb := "http://" + addr
	seen := map[string]bool{}
	waitFor(t, 30*time.Second, "HAProxy routing to every replica", func() bool {
		req, _ := http.NewRequest("GET", lb+"/api/servers", nil)
		req.Header.Set("Authorization", "Bearer "+teamToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		seen[resp.Header.Get("X-Mcp-Hub-Replica")] = resp.StatusCode == 200
		n := 0
		for _, ok := range seen {
			if ok {
				n++
			}
		}
		return n == 3
	})
	return lb
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func httpGet(url, token string) (int, string) {
	return httpDo("GET", url, token, "")
}

func httpDo(method, url, token, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// reviewedAt GETs the named server and returns the body of POST
// …/approve that approves what it showed: {"digest": …}.
func reviewedAt(t *testing.T, base, name string) string {
	t.Helper()
	code, body := httpDo("GET", base+"/api/servers/"+name, teamToken, "")
	var out struct {
		Digest string `json:"digest"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil || out.Digest == "" {
		t.Fatalf("GET %s: %d %s, want its approval digest", name, code, body)
	}
	return fmt.Sprintf(`{"digest":%q}`, out.Digest)
}

// replicaOf records which replica answered a session's requests
// (HAProxy's X-Mcp-Hub-Replica), and how many each answered.
type replicaOf struct {
	base   http.RoundTripper
	last   atomic.Value // string
	mu     sync.Mutex
	counts map[string]int
	sids   atomic.Int32 // exchanges that carried an Mcp-Session-Id
}

func (r *replicaOf) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+teamToken)
	resp, err := r.base.RoundTrip(req)
	if req.Header.Get("Mcp-Session-Id") != "" || (err == nil && resp.Header.Get("Mcp-Session-Id") != "") {
		r.sids.Add(1)
	}
	if err == nil {
		if rep := resp.Header.Get("X-Mcp-Hub-Replica"); rep != "" {
			r.last.Store(rep)
			r.mu.Lock()
			if r.counts == nil {
				r.counts = map[string]int{}
			}
			r.counts[rep]++
			r.mu.Unlock()
		}
	}
	return resp, err
}

// served returns how many responses each replica gave.
func (r *replicaOf) served() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.counts)
}

func (r *replicaOf) replica() string {
	s, _ := r.last.Load().(string)
	return s
}

// session is a streamable HTTP client session.
type session struct {
	cs  *mcp.ClientSession
	via *replicaOf
}

// connect opens a session at url (the load balancer or a replica): a
// session-era client (initialize, Mcp-Session-Id), kept on one replica by
// the load balancer's affinity.
func connect(ctx context.Context, url string) (*session, error) {
	return connectVersion(ctx, url, "2025-11-25")
}

// connectStateless connects a stateless 2026-07-28 client at url: no
// initialize, no session; each of its requests may go to any replica.
func connectStateless(ctx context.Context, url string) (*session, error) {
	return connectVersion(ctx, url, "2026-07-28")
}

func connectVersion(ctx context.Context, url, version string) (*session, error) {
	via := &replicaOf{base: http.DefaultTransport}
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: via}, MaxRetries: 1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "team-test", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, err
	}
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		cs.Close()
		return nil, fmt.Errorf("the client negotiated %s, want %s", v, version)
	}
	return &session{cs: cs, via: via}, nil
}

func mustConnect(t *testing.T, url string) *session {
	t.Helper()
	s, err := connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cs.Close() })
	return s
}

// echo calls the tool echo and checks its answer.
func (s *session) echo(ctx context.Context, msg string) error {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": msg}})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, msg) {
		return fmt.Errorf("echo %q: %+v", msg, res.Content)
	}
	return nil
}

// callVia calls tool of upstream server through hub_call_tool (the
// server's own tool, whatever the merged catalog picked).
func (s *session) callVia(ctx context.Context, server, tool string, args map[string]any) error {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "hub_call_tool",
		Arguments: map[string]any{"server": server, "tool": tool, "arguments": args}})
	if err != nil {
		return err
	}
	if res.IsError {
		text := ""
		if len(res.Content) > 0 {
			text = res.Content[0].(*mcp.TextContent).Text
		}
		return fmt.Errorf("%s/%s: %s", server, tool, text)
	}
	return nil
}
