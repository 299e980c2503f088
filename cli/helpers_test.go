package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// fixtureBin is the fixture MCP server the tests register as an upstream.
var fixtureBin string

func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "-browse" {
		os.Exit(browse(os.Args[2], os.Args[3:]...))
	}
	os.Exit(runTests(m))
}

// browserCommand is a $BROWSER that opens its URL with this test binary
// (see browse), so a command's "open this in a browser" runs in a test.
// With record set, the browser writes there what it ended on.
func browserCommand(t *testing.T, record string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if record == "" {
		return exe + " -browse"
	}
	return exe + " -browse %s " + record
}

// browse is the test binary run as a browser: it GETs u following
// redirects and keeping cookies, writes the status and the URL it ended on
// to record (when given), and returns 0 when the last page answered 2xx.
func browse(u string, record ...string) int {
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar, Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if len(record) > 0 {
		if err := os.WriteFile(record[0], fmt.Appendf(nil, "%d %s\n", resp.StatusCode, resp.Request.URL), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if resp.StatusCode/100 != 2 {
		return 1
	}
	return 0
}

// runTests builds the fixture, runs the tests and removes what they left.
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcp-hub-cli-")
	if err == nil {
		defer os.RemoveAll(dir)
		// No test touches the real user's config or data, whatever it
		// forgets to pass.
		os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg-data"))
		os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg-config"))
		fixtureBin, err = testbin.Build(dir, "./testdata/fixture")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// outcome is what a command did.
type outcome struct {
	stdout, stderr string
	code           int
}

func (o outcome) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", o.code, o.stdout, o.stderr)
}

// setup is what the commands of one test run with: a data dir, a config
// file and a clock.
type setup struct {
	data, config string
	now          func() time.Time
	// environ is more of the commands' environment; ctx, when set, is
	// what their context derives from.
	environ []string
	ctx     context.Context
	// stdin is the commands' stdin (default: empty); stdout and stderr,
	// when set, get a copy of what they write.
	stdin          io.Reader
	stdout, stderr io.Writer
}

// newSetup returns a fresh data dir and the config file content cfg.
func newSetup(t *testing.T, cfg string) *setup {
	t.Helper()
	return &setup{data: t.TempDir(), config: testbin.WriteFile(t, "hub.yaml", cfg)}
}

// run runs the command f as mcp-hub NAME ARGS... in-process, with the
// setup's config file (--config; none when it is "") and data dir (named by MCP_HUB_DATA_DIR in
// the command's environment, which is all the environment it gets, with
// the setup's environ).
func (s *setup) run(t *testing.T, f func(context.Context, *Env) int, name string, args ...string) outcome {
	t.Helper()
	stdin := s.stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	// Files, which any goroutine of the command may write at once.
	dir := t.TempDir()
	stdout, stderr := createFile(t, dir, "stdout"), createFile(t, dir, "stderr")
	if s.config != "" {
		args = append([]string{"--config", s.config}, args...)
	}
	e := &Env{
		Name:    name,
		Args:    args,
		Environ: append([]string{"MCP_HUB_DATA_DIR=" + s.data}, s.environ...),
		Stdin:   stdin,
		Stdout:  tee(stdout, s.stdout),
		Stderr:  tee(stderr, s.stderr),
		Now:     s.now,
	}
	parent := s.ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeout(parent, 60*time.Second)
	defer cancel()
	code := f(ctx, e)
	return outcome{stdout: readFile(t, stdout.Name()), stderr: readFile(t, stderr.Name()), code: code}
}

// createFile creates the file name in dir; the test closes it.
func createFile(t *testing.T, dir, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// readFile returns the content of the file path.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tee returns w, or a writer to both w and also when also is set.
func tee(w, also io.Writer) io.Writer {
	if also == nil {
		return w
	}
	return io.MultiWriter(w, also)
}

// store opens the setup's store for the test to look at or prepare.
func (s *setup) store(t *testing.T) *persist.Store {
	t.Helper()
	st, err := persist.Open(context.Background(), s.data, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// register stores a registration of the fixture, as an admin tool would
// (approved when approval says so).
func (s *setup) register(t *testing.T, name string, approval upstream.Approval, args ...string) upstream.Registration {
	t.Helper()
	spec := upstream.Spec{Name: name, Command: fixtureBin, Args: args, Env: map[string]string{"API_KEY": "sk-planted-secret-value"}}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	r := upstream.Registration{Spec: spec, Enabled: true, AutoConnect: true, Source: upstream.SourceAdmin, Approval: approval}
	if approval == upstream.ApprovalApproved {
		r.ApprovedHash = spec.Fingerprint()
	}
	r, err := s.store(t).Create(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// get returns the stored registration name.
func (s *setup) get(t *testing.T, name string) (upstream.Registration, error) {
	t.Helper()
	return s.store(t).Get(context.Background(), name)
}

// fixtureConfig is a config file with the fixture as upstream name, and
// extra as more YAML under mcpServers.
func fixtureConfig(name string, args []string, extra string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return fmt.Sprintf("mcpServers:\n  %s:\n    command: %q\n    args: [%s]\n%s", name, fixtureBin, strings.Join(q, ", "), extra)
}

// jsonString quotes s as JSON (and YAML) does.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
