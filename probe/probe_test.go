package probe

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestTargets: the upstreams of the file and the store, sorted by name, as
// the hub would run them: the file wins a name both define, and only
// approved, enabled registrations run; each other one says why not.
func TestTargets(t *testing.T) {
	ctx := context.Background()
	st, err := persist.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec := func(name string) upstream.Spec { return upstream.Spec{Name: name, Command: "server-" + name} }
	store := func(name string, source upstream.Source, edit func(*upstream.Registration)) {
		r := upstream.Registration{Spec: spec(name), Enabled: true, AutoConnect: true, Source: source}
		r.Approve()
		if edit != nil {
			edit(&r)
		}
		if _, err := st.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	store("ok", upstream.SourceCLI, nil)
	store("pending", upstream.SourceAdmin, func(r *upstream.Registration) { r.Approval, r.ApprovedHash = upstream.ApprovalPending, "" })
	store("rejected", upstream.SourceAdmin, func(r *upstream.Registration) { r.Approval, r.ApprovedHash = upstream.ApprovalRejected, "" })
	store("changed", upstream.SourceAdmin, func(r *upstream.Registration) { r.Spec.Args = []string{"--more"} })
	store("disabled", upstream.SourceCLI, func(r *upstream.Registration) { r.Enabled = false })
	store("stale", upstream.SourceConfig, nil)
	store("shared", upstream.SourceAdmin, func(r *upstream.Registration) { r.Approval, r.ApprovedHash = upstream.ApprovalPending, "" })
	cfg := &config.Config{File: "/etc/hub.yaml", Servers: []config.Server{
		{Spec: spec("shared")}, {Spec: spec("alpha")}, {Spec: spec("off"), Disabled: true},
	}}

	got, err := Targets(ctx, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Name, Source, NotRun string }
	var rows []row
	for _, tg := range got {
		rows = append(rows, row{tg.Spec.Name, tg.Source, tg.NotRun})
	}
	want := []row{
		{"alpha", "config", ""},
		{"changed", "admin", "not approved: what it runs changed since its approval; review it with mcp-hub approve changed"},
		{"disabled", "cli", "disabled"},
		{"off", "config", "disabled in /etc/hub.yaml"},
		{"ok", "cli", ""},
		{"pending", "admin", "not approved (pending): review it with mcp-hub approve pending"},
		{"rejected", "admin", "rejected"},
		{"shared", "config", ""},
		{"stale", "config", "stale: /etc/hub.yaml, the config file in effect, does not define it; a hub started with another config file registered it. A hub started with this config forgets it; mcp-hub remove stale forgets it now"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
}
