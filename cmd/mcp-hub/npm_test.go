package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// The version and commit the release build of TestNPMPackage links in.
const (
	npmTestVersion = "v9.9.9-npmtest"
	npmTestCommit  = "0123456789abcdef0123456789abcdef01234567"
)

// run runs a program in dir and returns its stdout, failing the test when
// it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// offlineNPM is the environment of npm commands that must not reach a
// registry: any request goes to a closed port on this machine, and the
// cache is the test's own.
func offlineNPM(dir string) []string {
	return []string{
		"npm_config_registry=http://127.0.0.1:9/",
		"npm_config_cache=" + filepath.Join(dir, "npm-cache"),
		"npm_config_offline=true",
		"npm_config_audit=false",
		"npm_config_fund=false",
		"npm_config_update_notifier=false",
	}
}

// TestNPMPackage builds the linux-x64 release archive and the npm packages
// from it as a release does (scripts/release.sh, scripts/npm.sh), installs
// the packed tarballs offline, and runs the installed bin shim (the
// launcher, which runs the platform package's binary) through the checks
// the release binary itself passes: its version; a stdio session in front of
// the fixture, with nothing but JSON-RPC on stdout; SIGTERM stopping the
// hub and its upstreams; the exit code of a bad config. npx runs it too.
func TestNPMPackage(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the test builds the linux-x64 archive; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	t.Parallel()
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dist := filepath.Join(dir, "dist")
	run(t, root, []string{"VERSION=" + npmTestVersion, "COMMIT=" + npmTestCommit}, "scripts/release.sh", "-o", dist, "linux-x64")
	run(t, root, nil, "scripts/npm.sh", "-i", dist)

	archive := "mcp-hub-" + npmTestVersion + "-linux-x64"
	t.Run("archive", func(t *testing.T) {
		sums := run(t, dist, nil, "sha256sum", "-c", "SHA256SUMS")
		if want := archive + ".tar.gz: OK\n"; sums != want {
			t.Errorf("sha256sum -c SHA256SUMS = %q, want %q", sums, want)
		}
		list := strings.Fields(run(t, dist, nil, "tar", "-tzf", archive+".tar.gz"))
		slices.Sort(list)
		want := []string{archive + "/", archive + "/LICENSE", archive + "/NOTICE", archive + "/README.md", archive + "/mcp-hub"}
		if !slices.Equal(list, want) {
			t.Errorf("archive holds %v, want %v", list, want)
		}
	})
	run(t, dist, nil, "tar", "-xzf", archive+".tar.gz")
	plain := filepath.Join(dist, archive, "mcp-hub")
	if out := run(t, dist, nil, "file", plain); !strings.Contains(out, "statically linked") {
		t.Errorf("file %s: %s; want a statically linked binary", plain, out)
	}

	npmVersion := strings.TrimPrefix(npmTestVersion, "v")
	tarballs := []string{
		filepath.Join(dist, "npm", "mcp-hub-cli-"+npmVersion+".tgz"),
		filepath.Join(dist, "npm", "mcp-hub-linux-x64-"+npmVersion+".tgz"),
	}
	prefix := filepath.Join(dir, "prefix")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, prefix, offlineNPM(dir), "npm", append([]string{"install", "--offline", "--prefix", prefix}, tarballs...)...)
	shim := filepath.Join(prefix, "node_modules", ".bin", "mcp-hub")

	for _, b := range []struct{ name, bin string }{{"binary", plain}, {"npm", shim}} {
		t.Run(b.name, func(t *testing.T) {
			t.Run("version", func(t *testing.T) {
				out := run(t, dir, nil, b.bin, "--version")
				for _, want := range []string{"mcp-hub " + npmTestVersion + "\n", "\ncommit: " + npmTestCommit + "\n", "\ntarget: linux/amd64\n"} {
					if !strings.Contains(out, want) {
						t.Errorf("--version lacks %q:\n%s", want, out)
					}
				}
			})
			t.Run("bad config exit code", func(t *testing.T) {
				cfg := writeFile(t, "hub.yaml", "mcpServers:\n  a:\n    args: [x]\n")
				cmd := exec.Command(b.bin, "--config", cfg, "--data-dir", t.TempDir())
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				var ee *exec.ExitError
				if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != exitConfig {
					t.Fatalf("exit = %v, want code %d", err, exitConfig)
				}
				if stdout.Len() != 0 {
					t.Errorf("stdout = %q, want nothing", stdout.String())
				}
				if !strings.Contains(stderr.String(), "mcpServers.a.command") {
					t.Errorf("stderr = %q, want the bad key", stderr.String())
				}
			})
			t.Run("stdio session and SIGTERM", func(t *testing.T) {
				npmSession(t, b.bin, b.bin == shim)
			})
		})
	}

	t.Run("setup launches with npx", func(t *testing.T) {
		// npm installed the binary the shim runs, so setup's entry runs
		// npx -y @mcp-hub/cli; the release binary's runs the binary.
		for bin, want := range map[string]string{shim: `"command": "npx",`, plain: `"command": "` + plain + `"`} {
			home := t.TempDir()
			out := run(t, dir, []string{"HOME=" + home, "MCP_HUB_DATA_DIR=" + filepath.Join(home, "data")}, bin, "setup", "claude", "--dry-run")
			if !strings.Contains(out, want) || bin == shim && !strings.Contains(out, `"@mcp-hub/cli"`) {
				t.Errorf("%s setup claude --dry-run:\n%s\nwant %s", bin, out, want)
			}
		}
	})

	t.Run("new user", func(t *testing.T) {
		npmNewUser(t, tarballs, npmVersion)
	})

	t.Run("npx", func(t *testing.T) {
		// npx -y with the packed tarballs as its packages: the first run
		// installs them into npx's cache, the second finds them there, as
		// a client's every launch after the first does.
		args := []string{"-y"}
		for _, tb := range tarballs {
			args = append(args, "-p", tb)
		}
		args = append(args, "mcp-hub", "--config", npmConfig(t, t.TempDir()), "--data-dir", t.TempDir())
		for i := range 2 {
			start := time.Now()
			c := startRaw(t, offlineNPM(dir), "npx", args...)
			if m := c.initialize(); m.Result == nil {
				t.Fatalf("initialize through npx: %s", m.Error)
			}
			if names := toolNames(t, c.call("tools/list", "").Result); !slices.Contains(names, "echo") {
				t.Fatalf("tools through npx = %v, want the fixture's echo", names)
			}
			t.Logf("npx run %d: first tools/list answered %s after start", i+1, time.Since(start).Round(time.Millisecond))
			if code, _ := c.closeStdin(20 * time.Second); code != 0 {
				t.Errorf("npx exited %d after stdin closed, want 0", code)
			}
			for j, l := range c.allLines() {
				if _, err := wire.Parse(l); err != nil {
					t.Errorf("npx run %d: stdout line %d is not JSON-RPC: %q", i+1, j+1, l)
				}
			}
		}
	})
}

// npmConfig writes a hub config with one fixture upstream, which writes its
// pid and its child's to dir, and returns its path.
func npmConfig(t *testing.T, dir string) string {
	return writeFile(t, "hub.yaml", fmt.Sprintf(`
mcpServers:
  fx:
    command: %s
    args: ["-name", "fx", "-only", "echo,add", "-pid-file", "%s/fx.pid", "-grandchild", "%s/fx-child.pid"]
`, fixtureBin, dir, dir))
}

// npmSession runs bin as a client would and checks the session: initialize,
// tools/list and a call reach the fixture; every stdout line is JSON-RPC;
// SIGTERM to bin makes it exit 0 within 10 s and leaves neither the hub
// (bin's child when launcher) nor the upstream and its child running.
func npmSession(t *testing.T, bin string, launcher bool) {
	dir := t.TempDir()
	start := time.Now()
	c := startRaw(t, nil, bin, "--config", npmConfig(t, dir), "--data-dir", t.TempDir())
	if m := c.initialize(); m.Result == nil {
		t.Fatalf("initialize: %s", m.Error)
	}
	if names := withoutHubTools(toolNames(t, c.call("tools/list", "").Result)); !slices.Equal(names, []string{"add", "echo"}) {
		t.Errorf("tools = %v, want [add echo]", names)
	}
	t.Logf("first tools/list answered %s after start", time.Since(start).Round(time.Millisecond))
	args := `{"message":"ü \"q\"","n":[1,2.50]}`
	if got := textOf(t, c.call("tools/call", `{"name":"echo","arguments":`+args+`}`).Result); got != args {
		t.Errorf("echo = %s, want %s byte for byte", got, args)
	}

	pids := []int{}
	for _, f := range []string{"fx.pid", "fx-child.pid"} {
		pid, err := testbin.ReadPID(filepath.Join(dir, f), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	killAtEnd(t, pids...)
	if launcher {
		kids := testbin.Children(c.cmd.Process.Pid)
		if len(kids) != 1 {
			t.Fatalf("children of the launcher: %v, want the hub alone", kids)
		}
		killAtEnd(t, kids...)
		pids = append(pids, kids...)
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", kids[0])); filepath.Base(exe) != "mcp-hub" {
			t.Errorf("the launcher's child runs %s, want the mcp-hub binary", exe)
		}
	}

	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("no exit within 10 s of SIGTERM")
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	if alive := testbin.WaitGone(5*time.Second, pids...); len(alive) > 0 {
		t.Errorf("still running after SIGTERM: %v (of hub and upstreams %v)", alive, pids)
	}
	lines := c.allLines()
	if len(lines) < 3 {
		t.Errorf("stdout had %d lines, want a response to each of 3 requests", len(lines))
	}
	for i, l := range lines {
		if _, err := wire.Parse(l); err != nil || !bytes.HasPrefix(l, []byte(`{"jsonrpc":"2.0"`)) {
			t.Errorf("stdout line %d is not JSON-RPC: %q", i+1, l)
		}
	}
	if regexp.MustCompile(`(?i)npm (warn|err)`).MatchString(c.stderr.String()) {
		t.Errorf("stderr has npm's complaints:\n%s", c.stderr.String())
	}
}

// npmNewUser walks the README's path of a new user on Linux, with the
// packed packages served by a registry on this machine as the public one
// serves them after a release: with nothing installed, npx -y @mcp-hub/cli
// runs the hub; npx -y @mcp-hub/cli setup claude --move-servers then puts
// the hub into Claude Desktop's file (unknown keys kept) and the file's
// server into the hub; and the entry setup wrote, started as Claude Desktop
// starts it, serves that server's tools. npm fetches the launcher and this
// platform's binary package, no other platform's.
func npmNewUser(t *testing.T, tarballs []string, version string) {
	var absent []npmManifest
	for _, p := range [][2]string{{"linux", "arm64"}, {"darwin", "x64"}, {"darwin", "arm64"}, {"win32", "x64"}} {
		absent = append(absent, npmManifest{Name: "@mcp-hub/" + p[0] + "-" + p[1], Version: version, OS: []string{p[0]}, CPU: []string{p[1]}})
	}
	reg := startNPMRegistry(t, tarballs, absent)
	home := t.TempDir()
	// A user's environment: the hub's config and data under HOME, npm's
	// cache empty.
	env := append(reg.env(filepath.Join(home, ".npm")), "HOME="+home, "XDG_CONFIG_HOME=", "XDG_DATA_HOME=")
	claudeFile := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	orig := fmt.Sprintf(`{
  "globalShortcut": "Alt+Space",
  "mcpServers": {
    "notes": {"command": %q, "args": ["-name", "notes", "-only", "echo"], "env": {"NOTES_TOKEN": "npm-new-user-secret-42"}}
  },
  "preferences": {"menuBarEnabled": true}
}
`, fixtureBin)
	if err := os.MkdirAll(filepath.Dir(claudeFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claudeFile, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}

	// 1. npx -y @mcp-hub/cli: the hub, on stdio, with nothing beforehand.
	start := time.Now()
	c := startRaw(t, env, "npx", "-y", "@mcp-hub/cli")
	if m := c.initialize(); m.Result == nil {
		t.Fatalf("initialize through npx -y @mcp-hub/cli: %s", m.Error)
	}
	if m := c.call("tools/list", ""); m.Result == nil {
		t.Fatalf("tools/list through npx -y @mcp-hub/cli: %s", m.Error)
	}
	t.Logf("npx -y @mcp-hub/cli, npm's cache empty: first tools/list answered %s after start", time.Since(start).Round(time.Millisecond))
	if code, _ := c.closeStdin(20 * time.Second); code != 0 {
		t.Fatalf("npx -y @mcp-hub/cli exited %d after stdin closed, want 0", code)
	}

	// 2. setup claude --move-servers, through npx.
	out := run(t, home, env, "npx", "-y", "@mcp-hub/cli", "setup", "claude", "--move-servers")
	if !strings.Contains(out, "moved into the hub: notes") || strings.Contains(out, "npm-new-user-secret-42") {
		t.Errorf("setup claude --move-servers said:\n%s", out)
	}
	b, err := os.ReadFile(claudeFile)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		GlobalShortcut string                    `json:"globalShortcut"`
		Preferences    map[string]any            `json:"preferences"`
		MCPServers     map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatalf("Claude Desktop's file after setup does not parse: %v\n%s", err, b)
	}
	entry := file.MCPServers["mcp-hub"]
	if len(file.MCPServers) != 1 || entry == nil || file.GlobalShortcut != "Alt+Space" || file.Preferences["menuBarEnabled"] != true {
		t.Fatalf("Claude Desktop's file after setup:\n%s\nwant the hub's entry alone in mcpServers and the other keys kept", b)
	}
	if got, _ := json.Marshal(entry); string(got) != `{"args":["-y","@mcp-hub/cli"],"command":"npx"}` {
		t.Errorf("the hub's entry = %s, want npx -y @mcp-hub/cli", got)
	}

	// 3. Claude Desktop starts the entry: the moved server's tools.
	var args []string
	for _, a := range entry["args"].([]any) {
		args = append(args, a.(string))
	}
	start = time.Now()
	c = startRaw(t, env, entry["command"].(string), args...)
	if m := c.initialize(); m.Result == nil {
		t.Fatalf("initialize through the entry setup wrote: %s", m.Error)
	}
	if names := withoutHubTools(toolNames(t, c.call("tools/list", "").Result)); !slices.Equal(names, []string{"echo"}) {
		t.Errorf("tools through the entry = %v, want the moved server's echo", names)
	}
	t.Logf("the entry setup wrote, npm's cache warm: first tools/list answered %s after start", time.Since(start).Round(time.Millisecond))
	if got := textOf(t, c.call("tools/call", `{"name":"echo","arguments":{"m":"hi"}}`).Result); got != `{"m":"hi"}` {
		t.Errorf("echo through the entry = %s", got)
	}
	if code, _ := c.closeStdin(20 * time.Second); code != 0 {
		t.Errorf("the hub exited %d after stdin closed, want 0", code)
	}
	for i, l := range c.allLines() {
		if _, err := wire.Parse(l); err != nil {
			t.Errorf("stdout line %d is not JSON-RPC: %q", i+1, l)
		}
	}

	// npm fetched the launcher and this platform's package, nothing else.
	var fetched []string
	for _, r := range reg.Requests() {
		if strings.HasSuffix(r, ".tgz") {
			fetched = append(fetched, strings.TrimPrefix(r, "GET "))
		}
	}
	slices.Sort(fetched)
	fetched = slices.Compact(fetched)
	want := []string{"/@mcp-hub/cli/-/cli-" + version + ".tgz", "/@mcp-hub/linux-x64/-/linux-x64-" + version + ".tgz"}
	if !slices.Equal(fetched, want) {
		t.Errorf("tarballs fetched: %v, want %v", fetched, want)
	}
}
