package cli

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// probeSetup declares alpha (the fixture's echo tool) and gamma (exits at
// once) in the config file, and stores a registration nobody approved.
func probeSetup(t *testing.T) *setup {
	t.Helper()
	s := newSetup(t, fixtureConfig("alpha", []string{"-only", "echo"},
		"  gamma:\n    command: "+jsonString(fixtureBin)+"\n    args: [\"-exit-immediately\"]\n"))
	s.register(t, "waiting", upstream.ApprovalPending)
	return s
}

// TestTools runs tools in-process: the catalog of the upstreams that
// connected, and the ones that did not, as JSON and as a table.
func TestTools(t *testing.T) {
	s := probeSetup(t)
	o := s.run(t, Tools, "tools", "--json")
	if o.code != ExitOK {
		t.Fatalf("tools --json: %s", o)
	}
	var rep probe.ToolsReport
	if err := json.Unmarshal([]byte(o.stdout), &rep); err != nil {
		t.Fatalf("tools --json: %v\n%s", err, o.stdout)
	}
	var echo *probe.ToolLine
	for i, tl := range rep.Tools {
		if tl.Name == "echo" {
			echo = &rep.Tools[i]
		}
	}
	if echo == nil || echo.Upstream != "alpha" || echo.Original != "echo" {
		t.Errorf("tools: %+v; want echo from alpha", rep.Tools)
	}
	ups := map[string]probe.UpstreamLine{}
	for _, u := range rep.Upstreams {
		ups[u.Name] = u
	}
	if a := ups["alpha"]; a.State != upstream.StateConnected || a.Tools != 1 || a.Exposed != 1 {
		t.Errorf("alpha: %+v", a)
	}
	if g := ups["gamma"]; g.State == upstream.StateConnected || g.Error == "" {
		t.Errorf("gamma: %+v, want an error", g)
	}
	if w := ups["waiting"]; !strings.HasPrefix(w.NotRun, "not approved") {
		t.Errorf("waiting: %+v, want not run (not approved)", w)
	}

	o = s.run(t, Tools, "tools")
	if o.code != ExitOK {
		t.Fatalf("tools: %s", o)
	}
	for _, re := range []string{
		`(?m)^TOOL +UPSTREAM +ORIGINAL NAME$`,
		`(?m)^echo +alpha +echo$`,
		`(?m)^Not in the catalog \(mcp-hub doctor says more\):$`,
		`(?m)^waiting +not run +not approved`,
		`(?m)^\d+ tool\(s\) from 1 of 3 upstream\(s\) and the hub; 0 not exposed\.$`,
	} {
		if !regexp.MustCompile(re).MatchString(o.stdout) {
			t.Errorf("tools table lacks %s:\n%s", re, o.stdout)
		}
	}
	if o := s.run(t, Tools, "tools", "extra"); o.code != ExitConfig || !strings.Contains(o.stderr, "Usage: mcp-hub tools [--json]") {
		t.Errorf("tools with an argument: %s", o)
	}
}

// TestDoctor runs doctor in-process with a clock that stands still: the
// time it reports taking is the command's clock's.
func TestDoctor(t *testing.T) {
	s := probeSetup(t)
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s.now = func() time.Time { return at }
	o := s.run(t, Doctor, "doctor")
	if o.code != ExitFail {
		t.Fatalf("doctor: want exit %d (gamma fails); %s", ExitFail, o)
	}
	for _, re := range []string{
		`^Checked 3 upstream\(s\) from ` + regexp.QuoteMeta(s.config) + ` and \S+hub\.db in 0s\.\n`,
		`(?m)^alpha +config +ok +` + regexp.QuoteMeta(fixtureBin) + ` +\S+ +` + upstream.DefaultProtocolVersion + ` +1 +`,
		`(?m)^gamma: FAILED$`,
		`(?m)^  hint:  it exits as soon as it starts`,
		`(?m)^waiting +admin +not approved +`,
		`(?m)^3 upstream\(s\): 1 ok, 0 with warnings, 1 failed, 1 not run\.$`,
	} {
		if !regexp.MustCompile(re).MatchString(o.stdout) {
			t.Errorf("doctor lacks %s:\n%s", re, o.stdout)
		}
	}
	if strings.Contains(o.stdout+o.stderr, "sk-planted-secret-value") {
		t.Errorf("doctor shows an env value:\n%s", o)
	}

	empty := newSetup(t, "")
	if o := empty.run(t, Doctor, "doctor"); o.code != ExitOK || !strings.HasPrefix(o.stdout, "No upstreams: "+empty.config+" defines none") {
		t.Errorf("doctor with no upstreams: %s", o)
	}
}

// TestToolsListsWhatClientsAreServed: tools prints the tools/list a client
// of the hub gets, in its order, with every setting that decides it: code
// mode's hub_run_code (it was left out), and --catalog-expose search
// (refused as an unknown flag), where tools/list holds the hub's own tools
// and the others are found by search.
func TestToolsListsWhatClientsAreServed(t *testing.T) {
	s := newSetup(t, fixtureConfig("alpha", []string{"-only", "echo,add"}, "codeMode:\n  mode: \"on\"\n"))
	for _, expose := range []string{"all", "search"} {
		t.Run(expose, func(t *testing.T) {
			o := s.run(t, Tools, "tools", "--json", "--catalog-expose", expose)
			if o.code != ExitOK {
				t.Fatalf("tools --json --catalog-expose %s: %s", expose, o)
			}
			var rep probe.ToolsReport
			if err := json.Unmarshal([]byte(o.stdout), &rep); err != nil {
				t.Fatalf("%v\n%s", err, o.stdout)
			}
			var printed, unlisted []string
			for _, tl := range rep.Tools {
				printed = append(printed, tl.Name)
			}
			for _, tl := range rep.Unlisted {
				unlisted = append(unlisted, tl.Name)
			}

			serve := &setup{data: t.TempDir(), config: s.config}
			c := startServe(t, serve, "--catalog-expose", expose)
			a := c.call(t, "2", "tools/list", `{}`)
			c.close(t)
			var list struct{ Tools []struct{ Name string } }
			if err := json.Unmarshal(a.Result, &list); err != nil {
				t.Fatalf("tools/list: %v: %s", err, a.Result)
			}
			var served []string
			for _, tl := range list.Tools {
				served = append(served, tl.Name)
			}
			if !slices.Equal(printed, served) {
				t.Errorf("tools printed %v\nthe hub serves %v", printed, served)
			}
			if !slices.Contains(printed, "hub_run_code") {
				t.Errorf("tools printed no hub_run_code with codeMode on: %v", printed)
			}
			wantUnlisted := []string(nil)
			if expose == "search" {
				wantUnlisted = []string{"add", "echo"}
			}
			if rep.Expose != expose || !slices.Equal(unlisted, wantUnlisted) {
				t.Errorf("expose %q, unlisted %v; want %q, %v", rep.Expose, unlisted, expose, wantUnlisted)
			}
		})
	}
	o := s.run(t, Tools, "tools", "--catalog-expose", "search")
	for _, re := range []string{
		`(?m)^hub_run_code +hub +hub_run_code$`,
		`(?m)^Not in tools/list \(catalog.expose search: hub_search_tools finds them, hub_call_tool calls them\) \(2\):$`,
		`(?m)^echo +alpha +echo$`,
		`(?m)^\d+ tool\(s\) in tools/list and 2 found by search, from 1 of 1 upstream\(s\) and the hub; 0 not exposed\.$`,
	} {
		if !regexp.MustCompile(re).MatchString(o.stdout) {
			t.Errorf("tools --catalog-expose search lacks %s:\n%s", re, o)
		}
	}
}
