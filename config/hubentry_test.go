package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHubEntries (issue 29 item 2): a config file's entries that launch
// mcp-hub itself are named as such; one that would take this hub's own
// config file or store is not run (and its name does not matter), one that
// takes others runs as a hub under this hub, and one under a name no
// upstream may have is not run, with the reason.
func TestHubEntries(t *testing.T) {
	dir := t.TempDir()
	other := writeFile(t, "other.yaml", "dataDir: "+filepath.Join(dir, "other-data")+"\n")
	cfgPath := filepath.Join(dir, "claude.json")
	content := `{"mcpServers": {
  "hub": {"command": "/opt/mcp-hub/bin/mcp-hub"},
  "again": {"command": "npx", "args": ["-y", "@mcp-hub/cli", "--config", "claude.json", "--data-dir", "elsewhere"], "cwd": "` + dir + `"},
  "nested": {"command": "/opt/mcp-hub/bin/mcp-hub", "args": ["--config", "` + other + `"]},
  "hub_x": {"command": "mcp-hub", "args": ["--data-dir", "/srv/x"]},
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
}}`
	writeFileAt(t, cfgPath, content)
	c, err := Load(Sources{File: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Spec.Name)
	}
	if strings.Join(names, ",") != "memory,nested" {
		t.Errorf("servers %v; want memory and nested", names)
	}
	want := map[string]string{
		"again":  "it launches mcp-hub itself, with this config file (" + cfgPath + "): that hub would start another, without end",
		"hub":    "it launches mcp-hub itself, on this hub's store (hub.db in the default data directory): it would run this hub's servers a second time",
		"hub_x":  `it launches mcp-hub itself, a hub under this hub, but its name cannot be an upstream's (invalid name "hub_x": "hub" and names starting "hub_" are reserved for the hub (its own tools are hub_*)): rename the entry to run it`,
		"nested": "",
	}
	if len(c.HubEntries) != len(want) {
		t.Errorf("hub entries %+v; want %d", c.HubEntries, len(want))
	}
	for _, he := range c.HubEntries {
		if w, ok := want[he.Name]; !ok || he.NotRun != w {
			t.Errorf("%s: NotRun %q; want %q", he.Name, he.NotRun, w)
		}
		if he.Name == "nested" && (he.Config != other || he.Store != filepath.Join(dir, "other-data", "hub.db")) {
			t.Errorf("nested: config %q, store %q", he.Config, he.Store)
		}
	}
	// Under a data dir of its own, the entry without arguments is a hub of
	// another store: it runs.
	c, err = Load(Sources{File: cfgPath, Environ: []string{"MCP_HUB_DATA_DIR=" + filepath.Join(dir, "mine")}})
	if err != nil {
		t.Fatal(err)
	}
	if he, ok := c.HubUnder(c.Servers[0].Spec); ok {
		t.Errorf("memory is taken for a hub: %+v", he)
	}
	for _, he := range c.HubEntries {
		if he.Name == "hub" && he.NotRun != want["hub_x"][:0]+`it launches mcp-hub itself, a hub under this hub, but its name cannot be an upstream's (invalid name "hub": "hub" and names starting "hub_" are reserved for the hub (its own tools are hub_*)): rename the entry to run it` {
			t.Errorf("hub with a data dir of its own: %q", he.NotRun)
		}
	}
}
