package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestDownloadHintOnlyWhenNeeded (issue 29 item 9): doctor says npx may be
// downloading the package only under a server that failed to answer in
// time or came close to it, not under one that connected in a few seconds
// on a busy machine.
func TestDownloadHintOnlyWhenNeeded(t *testing.T) {
	cfg := &config.Config{Timeouts: config.Timeouts{InitTimeout: 30 * time.Second}}
	cat := catalog.Build(nil, nil)
	p := &Report{Catalog: cat, Wait: time.Minute}
	spec := upstream.Spec{Name: "memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}}
	for _, tt := range []struct {
		name  string
		res   Result
		wants bool
	}{
		{"connected in 8s of 30s", Result{Target: Target{Spec: spec}, Status: upstream.Status{State: upstream.StateConnected}, Ready: 8 * time.Second, Settled: true}, false},
		{"connected in 20s of 30s", Result{Target: Target{Spec: spec}, Status: upstream.Status{State: upstream.StateConnected}, Ready: 20 * time.Second, Settled: true}, true},
		{"no answer within 30s", Result{Target: Target{Spec: spec}, Status: upstream.Status{State: upstream.StateFailed, LastError: "initialize: no answer within 30s"}, Settled: true}, true},
	} {
		row := Diagnose(&tt.res, p, cfg)
		got := strings.Contains(strings.Join(row.Hints, "\n"), "npx downloads the package on its first run")
		if got != tt.wants {
			t.Errorf("%s: download hint %v, want %v (hints %q)", tt.name, got, tt.wants, row.Hints)
		}
	}
}
