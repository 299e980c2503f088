package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcp-hub/mcp-hub/config"
)

// A program that embeds the hub loads a hub.yaml (and MCP_HUB_* variables)
// and turns it into the hub's options and servers.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "hub")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "hub.yaml")
	yaml := "logLevel: debug\nmcpServers:\n  files:\n    command: npx\n    args: [-y, \"@modelcontextprotocol/server-filesystem\", /data]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := config.Load(config.Sources{File: file, Environ: []string{"MCP_HUB_CATALOG__POLICY=prefix"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := cfg.HubOptions(config.HubParams{Version: "1.0.0"})
	fmt.Println(cfg.LogLevel, opts.Catalog.Policy, cfg.HubServers()[0].Spec.Args)
	// Output: debug prefix [-y @modelcontextprotocol/server-filesystem /data]
}
