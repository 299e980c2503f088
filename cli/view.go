package cli

import (
	"context"
	"fmt"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/probe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The commands show the upstreams a hub started with the config in effect
// (the one the command loaded: --config, $MCP_HUB_CONFIG or the default
// file) would run. The file is the truth for its names, whether or not a
// hub has stored them yet; a stored registration of source config that the
// file does not define was stored by a hub started with another config
// file: it is stale, shown as such, never as live, and a hub started with
// this config forgets it.

// entry is one upstream as list and status show it.
type entry struct {
	upstream.Registration
	// Stale is set for a stored config registration the config in effect
	// does not define.
	Stale bool
}

// entries returns the upstreams of the config in effect and of the store,
// by name, and the stored registrations that cannot be decoded (but those
// whose names the file defines: its entry replaces them).
func entries(ctx context.Context, st *persist.Store, cfg *config.Config) (map[string]entry, []upstream.BrokenRegistration, error) {
	regs, broken, err := registrations(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]entry{}
	for _, r := range regs {
		out[r.Spec.Name] = entry{Registration: r, Stale: r.Source == upstream.SourceConfig}
	}
	for _, s := range cfg.Servers {
		out[s.Spec.Name] = entry{Registration: fromConfig(s)}
	}
	var keep []upstream.BrokenRegistration
	for _, b := range broken {
		if _, inFile := configServer(cfg, b.Name); !inFile {
			keep = append(keep, b)
		}
	}
	return out, keep, nil
}

// fromConfig is the registration a hub stores for a server of the config
// file: approved by whoever wrote the file.
func fromConfig(s config.Server) upstream.Registration {
	r := upstream.Registration{Spec: s.Spec, Enabled: !s.Disabled, AutoConnect: true, Source: upstream.SourceConfig}
	r.Approve()
	return r
}

// configServer returns the server of the config in effect named name.
func configServer(cfg *config.Config, name string) (config.Server, bool) {
	for _, s := range cfg.Servers {
		if s.Spec.Name == name {
			return s, true
		}
	}
	return config.Server{}, false
}

// inConfigFile says that the config in effect defines name, for the
// command cmd, which cannot change it.
func inConfigFile(cfg *config.Config, cmd, name string) string {
	return fmt.Sprintf("mcp-hub %s: %q is defined in %s (the config file in effect); edit it there", cmd, name, cfg.File)
}

// staleText is what the commands say about a stale registration.
func staleText(cfg *config.Config, name string) string {
	return probe.StaleWhy(cfg, name)
}
