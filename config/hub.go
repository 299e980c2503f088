package config

import (
	"log/slog"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/codemode"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// HubParams are what a hub needs besides its configuration.
type HubParams struct {
	Version string
	Logger  *slog.Logger
	// Store keeps registrations; nil: upstreams come from code and config only.
	Store hub.Store
	// ProcessGroups records the process groups of stdio upstreams (mcp-hub:
	// a file in the data dir), nil for none.
	ProcessGroups upstream.ProcessGroups
}

// HubOptions returns the options of a hub that runs this configuration.
func (c *Config) HubOptions(p HubParams) *hub.Options {
	fw := c.FirstListWait
	if fw == 0 {
		fw = -1
	}
	return &hub.Options{
		Version:             p.Version,
		Logger:              p.Logger,
		Catalog:             catalog.Options{Policy: catalog.Policy(c.CatalogPolicy), Separator: c.CatalogSeparator},
		Expose:              c.Exposure(),
		FirstListWait:       fw,
		MaxMessageBytes:     c.MaxMessageBytes,
		Store:               p.Store,
		Admin:               hub.AdminMode(c.AdminTools),
		Approval:            hub.ApprovalMode(c.AdminApproval),
		ConfigFile:          c.File,
		MaxToolOutputLength: c.MaxToolOutput,
		AllowedServerNames:  c.AllowedServerNames,
		Upstream:            c.UpstreamOptions(p.ProcessGroups),
		ToolPolicy:          c.Policy,
		CodeMode: hub.CodeModeOptions{Mode: hub.CodeMode(c.CodeModeMode), Limits: codemode.Limits{
			Timeout: c.CodeTimeout, MemoryBytes: int64(c.CodeMemoryMiB) << 20, MaxCalls: c.CodeMaxCalls, MaxConcurrent: c.CodeMaxConcurrent,
		}},
	}
}

// Exposure is which tools tools/list holds (the catalog section's expose
// keys).
func (c *Config) Exposure() toolsearch.Exposure {
	return toolsearch.Exposure{Mode: toolsearch.Mode(c.CatalogExpose), Always: c.CatalogAlwaysExpose,
		SessionTools: c.CatalogSessionTools, SearchAbove: c.CatalogSearchAbove}
}

// UpstreamOptions are the upstream manager's options (the hub sets its own
// hooks on top).
func (c *Config) UpstreamOptions(groups upstream.ProcessGroups) upstream.Options {
	return upstream.Options{
		ProtocolVersion:     c.ProtocolVersion,
		InitTimeout:         c.InitTimeout,
		ListTimeout:         c.ListTimeout,
		CallTimeout:         c.CallTimeout,
		MaxInFlight:         c.MaxInFlight,
		MaxMessageBytes:     c.MaxMessageBytes,
		ShutdownGrace:       c.ShutdownGrace,
		Backoff:             c.Backoff.Upstream(),
		HealthInterval:      c.HealthInterval,
		HealthFailures:      c.HealthFailures,
		MaxConcurrentSpawns: c.MaxSpawns,
		MaxInstances:        c.MaxInstances,
		MaxTotalInstances:   c.MaxAllInstances,
		InheritEnv:          c.InheritEnv,
		ProcessGroups:       groups,
	}
}

// HubServers returns the servers of the file as [hub.Hub.Start] and
// [hub.Hub.Reload] take them.
func (c *Config) HubServers() []hub.ConfigServer {
	var out []hub.ConfigServer
	for _, s := range c.Servers {
		out = append(out, hub.ConfigServer{Spec: s.Spec, Disabled: s.Disabled})
	}
	return out
}

// TelemetryConfig returns the telemetry section as package telemetry takes
// it, with the header values resolved (lookup is os.LookupEnv in
// production; it also reads the OTEL_* variables).
func (c *Config) TelemetryConfig(version string, lookup func(string) (string, bool)) (telemetry.Config, error) {
	tc := telemetry.Config{
		Endpoint: c.TelemetryEndpoint, Protocol: c.TelemetryProtocol, ServiceName: c.TelemetryServiceName,
		ResourceAttributes: c.TelemetryResourceAttributes, Sampler: c.TelemetrySampler, SamplerArg: c.TelemetrySamplerArg,
		Version: version, Lookup: lookup,
	}
	for k, v := range c.TelemetryHeaders {
		val, err := v.Resolve(lookup)
		if err != nil {
			return tc, &Error{File: c.File, Key: "telemetry.headers." + k, Msg: err.Error()}
		}
		if tc.Headers == nil {
			tc.Headers = map[string]string{}
		}
		tc.Headers[k] = val
	}
	return tc, nil
}
