package main

import (
	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
)

// The configuration lives in package config; these names keep the commands
// short.
type (
	// Config is the hub's configuration.
	Config = config.Config
	// ServerConfig is one upstream of the config file.
	ServerConfig = config.Server
	// ConfigError names the file and key of a bad configuration.
	ConfigError = config.Error
)

// loadConfig loads the configuration as every command does: defaults, the
// config file (--config, $MCP_HUB_CONFIG or the user's hub.yaml), MCP_HUB_*
// variables of environ, and the flags the user set.
func loadConfig(flags *pflag.FlagSet, environ []string) (*Config, error) {
	return config.Load(config.Sources{Flags: flags, Environ: environ, DefaultFile: config.DefaultFile()})
}
