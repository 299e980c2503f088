package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	hubcli "github.com/mcp-hub/mcp-hub/cli"
)

// TestREADMEMatchesBinary: every mcp-hub command line the README shows
// names a command of the tree (or help) and flags that command's --help
// lists, and every path it gives under <user config dir>, <user data dir>
// or <data dir> is one the --help output gives too; the README names the
// default config file as --help does.
func TestREADMEMatchesBinary(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	tree := commands()
	help := map[string]string{} // command ("" for mcp-hub itself) → its --help
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		code := hubcli.Run(context.Background(), tree, hubcli.Env{Args: args, Stdout: &out, Stderr: &errOut})
		if code != exitOK || errOut.Len() > 0 {
			t.Fatalf("mcp-hub %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	help[""] = run("--help")
	for name := range tree {
		help[name] = run(name, "--help")
	}
	help["help"] = run("help")
	allHelp := strings.Join(slices.Collect(func(yield func(string) bool) {
		for _, h := range help {
			if !yield(h) {
				return
			}
		}
	}), "\n")

	// The command lines: in `code spans` and indented code blocks.
	var snippets []string
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(readme, -1) {
		snippets = append(snippets, m[1])
	}
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "    ") {
			snippets = append(snippets, l)
		}
	}
	lineRE := regexp.MustCompile(`(?:^|[\s/])mcp-hub((?: +[^\s#]+)*)`)
	checked := 0
	for _, sn := range snippets {
		for _, m := range lineRE.FindAllStringSubmatch(sn, -1) {
			words := strings.Fields(m[1])
			cmd := ""
			if len(words) > 0 && regexp.MustCompile(`^[a-z]+$`).MatchString(words[0]) {
				cmd, words = words[0], words[1:]
				if _, ok := help[cmd]; !ok {
					t.Errorf("README: %q: mcp-hub has no command %q", strings.TrimSpace(m[0]), cmd)
					continue
				}
			}
			checked++
			for _, w := range words {
				if w == "--" {
					break // the rest is an upstream's command line
				}
				flag, _, _ := strings.Cut(w, "=")
				if strings.HasPrefix(flag, "--") && !strings.Contains(help[cmd], flag+" ") {
					t.Errorf("README: %q: mcp-hub %s --help has no %s", strings.TrimSpace(m[0]), cmd, flag)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d command lines of the README: the scan misses them", checked)
	}

	// The paths.
	paths := regexp.MustCompile(`<(?:user config dir|user data dir|data dir)>[/\w.-]*`).FindAllString(readme, -1)
	for _, p := range paths {
		if !strings.Contains(allHelp, p) {
			t.Errorf("README names %s; no --help output does", p)
		}
	}
	slices.Sort(paths)
	t.Logf("checked %d mcp-hub command lines and %d paths (%s) of the README against --help", checked, len(paths), strings.Join(slices.Compact(paths), ", "))
	def := regexp.MustCompile(`default (<user config dir>/\S+?)\)`).FindStringSubmatch(help[""])
	if def == nil {
		t.Fatalf("mcp-hub --help names no default config file:\n%s", help[""])
	}
	if !strings.Contains(readme, "`"+def[1]+"`") {
		t.Errorf("README does not name the default config file %s", def[1])
	}
	t.Run("install", func(t *testing.T) { checkInstall(t, readme, tree) })
}

// checkInstall: the README's install route that works on a fresh machine
// today comes first, from the clone, with make targets that do what it
// says; npx, the release archives and go install are described as what a
// published release provides, with how a release is made (a tag starts the
// release workflow); setup and the client snippets give the command that
// works for how the binary was installed, as setup does (issue 29 item 1).
func checkInstall(t *testing.T, readme string, tree hubcli.Commands) {
	section := func(heading string) string {
		i := strings.Index(readme, "\n"+heading+"\n")
		if i < 0 {
			t.Fatalf("README has no %q", heading)
		}
		rest := readme[i+len(heading)+2:]
		if j := strings.Index(rest, "\n## "); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	install := section("## Install")
	first, _, _ := strings.Cut(install, "\n### ")
	code := indented(first)
	if !strings.Contains(code, "git clone") || !strings.Contains(code, "make build") || !strings.Contains(code, "./bin/mcp-hub") {
		t.Errorf("the first install route is not the clone's (git clone, make build, ./bin/mcp-hub):\n%s", first)
	}
	for _, w := range []string{"npx", "go install", "releases/download"} {
		if strings.Contains(first, w) {
			t.Errorf("the clone route mentions %s, which only a published release provides", w)
		}
	}
	// The make targets it names do what it says.
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for target, does := range map[string]string{"build": "-o bin/mcp-hub ./cmd/mcp-hub", "run": "./bin/mcp-hub"} {
		if !regexp.MustCompile(`(?m)^` + target + `:.*\n(\t.*\n)*\t.*` + regexp.QuoteMeta(does)).Match(mk) {
			t.Errorf("Makefile: make %s does not run %q", target, does)
		}
	}
	// How a release is made: a tag starts the workflow.
	wf, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil || !regexp.MustCompile(`(?m)^\s+tags: \["v\*"\]`).Match(wf) {
		t.Errorf("the release workflow does not run on a version tag (%v)", err)
	}
	for _, w := range []string{"git tag v1.2.3", "(.github/workflows/release.yml)", "(docs/RELEASING.md)"} {
		if !strings.Contains(install, w) {
			t.Errorf("the install section does not say how a release is made: no %q", w)
		}
	}
	// Every mention of what a published release provides says so: in its
	// paragraph, the one before a code block, or its section's heading.
	heading, prev := "", ""
	for _, para := range strings.Split(readme, "\n\n") {
		if h := regexp.MustCompile(`(?m)^#+ .*$`).FindString(para); h != "" {
			heading = h
		}
		isCode := strings.TrimSpace(indented(para)) == strings.TrimSpace(para) && strings.HasPrefix(para, "    ")
		context := para
		if isCode {
			context = prev + "\n" + para
		}
		for _, w := range []string{"@mcp-hub/cli", "go install github.com/mcp-hub", "releases/download"} {
			if strings.Contains(para, w) && !strings.Contains(strings.ToLower(context+heading), "release") {
				t.Errorf("README offers %s as if it were published; say it comes with a published release:\n%s", w, para)
			}
		}
		if !isCode {
			prev = para
		}
	}
	// Setup from the clone, as setup does it: the absolute path of the
	// binary that ran it (npm did not install it), updating an entry that
	// launches mcp-hub under another name.
	setup := section("## Set up your client in one command")
	if cmd := strings.TrimSpace(indented(setup)); !strings.HasPrefix(cmd, "./bin/mcp-hub setup claude") {
		t.Errorf("the setup section's command is %q, not the clone's ./bin/mcp-hub setup", cmd)
	}
	for _, w := range []string{"runs by its absolute path", "(`--launcher path`, the default when npm did not install it", "`setup` updates that one instead of adding a second"} {
		if !strings.Contains(strings.Join(strings.Fields(setup), " "), w) {
			t.Errorf("the setup section does not say %q", w)
		}
	}
	file := writeFile(t, "claude_desktop_config.json", `{"mcpServers": {"hub": {"command": "npx", "args": ["-y", "@mcp-hub/cli"]}}}`)
	var out, errOut bytes.Buffer
	code2 := hubcli.Run(context.Background(), tree, hubcli.Env{Args: []string{"setup", "claude", "--config-file", file, "--dry-run", "--data-dir", t.TempDir()},
		Environ: []string{"HOME=" + t.TempDir()}, Stdout: &out, Stderr: &errOut})
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	if code2 != exitOK || !strings.Contains(out.String(), `+{"mcpServers": {"hub": {"command":`+strconv.Quote(exe)) || strings.Contains(out.String(), `"mcp-hub"`) {
		t.Errorf("setup does not do what the README says (exit %d):\n%s%s", code2, out.String(), errOut.String())
	}
	// The client snippets run the built binary; npx only for a release.
	connect := section("## Connect your client")
	if !strings.Contains(connect, `{"mcpServers": {"hub": {"command": "/path/to/mcp-hub/bin/mcp-hub"`) {
		t.Errorf("the Claude Desktop snippet does not run the built binary")
	}
}

// indented returns the indented (code) lines of a part of the README.
func indented(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "    ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestMakeTestSaysWhatItInstalls (issue 29 item 8): make test says first,
// before it installs anything, that it installs Debian's chromium and
// postgresql with apt-get as root, and what is missing here.
func TestMakeTestSaysWhatItInstalls(t *testing.T) {
	dry, err := exec.Command("make", "-n", "-C", "../..", "test").Output()
	if err != nil {
		t.Fatalf("make -n test: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(dry), "\n") {
		if !strings.HasPrefix(l, "make") && strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 || lines[0] != "./scripts/test-notice.sh" {
		t.Fatalf("make test does not start with the notice:\n%s", dry)
	}
	cmd := exec.Command("./scripts/test-notice.sh")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("test-notice.sh: %v\n%s", err, stderr.String())
	}
	got := strings.Join(strings.Fields(stderr.String()), " ")
	for _, w := range []string{
		"make test installs what its tests need, when it is missing: the Go modules (go mod download), the pinned npm packages (into .cache/npm), and Debian's chromium and postgresql with apt-get, as root",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("the notice does not say %q:\n%s", w, stderr.String())
		}
	}
	if !strings.Contains(got, "Nothing to install with apt-get here") && !strings.Contains(got, "Missing here, to be installed with apt-get now:") {
		t.Errorf("the notice does not say what is missing here:\n%s", stderr.String())
	}
}
