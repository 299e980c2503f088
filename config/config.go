// Package config loads mcp-hub's configuration: built-in defaults, a config
// file (YAML or JSON; a Claude Desktop config file is one), MCP_HUB_*
// environment variables and command-line flags, in rising precedence.
//
// The keys are the koanf tags of [Config] and its sections; their defaults,
// allowed values and documentation sit next to them in the default, enum
// and doc tags, and [Keys] lists them. A bad file is an [*Error] that names
// the file and the key, and suggests the key meant when one was misspelt.
//
// A program that embeds the hub loads a configuration with [Load] and turns
// it into the hub's options with [Config.HubOptions]:
//
//	cfg, err := config.Load(config.Sources{File: "hub.yaml", Environ: os.Environ()})
//	...
//	h, err := hub.New(cfg.HubOptions(config.HubParams{Version: "1.0.0", Logger: logger}))
//	h.Start(ctx, cfg.HubServers())
package config

import (
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/toolpolicy"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Config is the hub's whole configuration, after defaults, the config file,
// MCP_HUB_* environment variables and command-line flags (in rising
// precedence) were merged and validated.
//
// The sections of the file (catalog, timeouts, http, …) are embedded, so
// their fields read as cfg.CatalogPolicy, cfg.HTTPListen, and so on.
type Config struct {
	// File is the config file read, "" when none.
	File string `koanf:"-"`
	// Missing is the default config file when none was named and it does
	// not exist ("" otherwise); Misplaced is then a file of its name one
	// directory up (<user config dir>/hub.yaml), which is not read.
	Missing, Misplaced string `koanf:"-"`

	LogLevel  string `koanf:"logLevel" flag:"log-level" default:"info" enum:"debug,info,warn,error" doc:"log level"`
	LogFormat string `koanf:"logFormat" flag:"log-format" default:"text" enum:"text,json" doc:"log format on stderr"`
	DataDir   string `koanf:"dataDir" flag:"data-dir" default:"<user data dir>/mcp-hub" doc:"where hub.db and http-token live"`
	Store     Source `koanf:"store" flag:"store" doc:"the registration store: empty for hub.db in dataDir (SQLite), or a postgres://user:password@host:port/database URL that several hubs share (replicas behind a load balancer); may be \"${VAR}\" or \"file:<path>\""`

	CatalogSettings `koanf:"catalog"`

	FirstListWait   time.Duration `koanf:"firstListWait" flag:"first-list-wait" default:"10s" doc:"how long a session's first tools/list waits for upstreams still connecting (0: no wait)"`
	ConfigPoll      time.Duration `koanf:"configPoll" default:"1s" doc:"how often the running hub checks its config file for edits and applies them to its servers (0: never)"`
	ProtocolVersion string        `koanf:"protocolVersion" default:"2026-07-28" doc:"protocol version asked of upstreams (the newest: a server that does not speak it is asked with initialize for its newest session-era version)"`

	Timeouts `koanf:"timeouts"`
	Limits   `koanf:"limits"`

	// Backoff is the reconnect schedule of upstreams.
	Backoff Reconnect `koanf:"reconnect"`

	Health    `koanf:"health"`
	Security  `koanf:"security"`
	Admin     `koanf:"admin"`
	HTTP      `koanf:"http"`
	Auth      `koanf:"auth"`
	Env       `koanf:"env"`
	Telemetry `koanf:"telemetry"`

	CodeMode   `koanf:"codeMode"`
	ToolPolicy `koanf:"toolPolicy"`
	// Policy is ToolPolicy parsed; nil when it allows every call.
	Policy *toolpolicy.Policy `koanf:"-"`

	// Servers are the upstreams the file declares, sorted by name.
	Servers []Server `koanf:"-"`
	// HubEntries are the file's entries that launch mcp-hub itself, those
	// that run (among Servers) and those that do not; see [HubEntry].
	HubEntries []HubEntry `koanf:"-"`
}

// CatalogSettings is the catalog section: how the tools of the upstreams
// are merged.
type CatalogSettings struct {
	CatalogPolicy    string `koanf:"policy" flag:"catalog-policy" default:"merge" enum:"merge,prefix" doc:"merge: names unchanged, first upstream by name wins a collision; prefix: <server><separator><tool>"`
	CatalogSeparator string `koanf:"separator" default:"__" doc:"separator of prefixed names ([A-Za-z0-9_-], 1-8 characters)"`
	CatalogExpose    string `koanf:"expose" flag:"catalog-expose" default:"all" enum:"all,search,auto" doc:"all: tools/list holds every tool; search: only the hub's own tools (hub_search_tools finds the others, hub_call_tool calls them), alwaysExpose and those a session found and called; auto: search while the catalog holds more than searchAbove tools"`
	// CatalogAlwaysExpose are exposed tool names or globs listed in search mode too.
	CatalogAlwaysExpose []string `koanf:"alwaysExpose" doc:"tool names, or globs where * matches any run of characters, listed in search mode too (as the tools filters match)"`
	CatalogSessionTools int      `koanf:"sessionTools" default:"20" doc:"in search mode, how many tools a session found and called join its own tools/list (least recently used go first)"`
	CatalogSearchAbove  int      `koanf:"searchAbove" default:"60" doc:"expose auto: search mode while the catalog holds more upstream tools than this"`
}

// Timeouts is the timeouts section.
type Timeouts struct {
	InitTimeout   time.Duration `koanf:"initialize" default:"30s" doc:"spawn/connect plus initialize"`
	ListTimeout   time.Duration `koanf:"list" default:"15s" doc:"listing tools, prompts and resources"`
	CallTimeout   time.Duration `koanf:"call" default:"120s" doc:"one call"`
	ShutdownGrace time.Duration `koanf:"shutdownGrace" default:"2s" doc:"each wait of the stdio shutdown: after closing stdin, and after SIGTERM"`
}

// Limits is the limits section.
type Limits struct {
	MaxInFlight     int `koanf:"maxInFlight" default:"10" doc:"concurrent calls per upstream; more wait their turn"`
	MaxMessageBytes int `koanf:"maxMessageBytes" default:"16777216" doc:"largest message read from an upstream or a client"`
	MaxSpawns       int `koanf:"maxConcurrentSpawns" default:"4" doc:"connection attempts running at once"`
	MaxInstances    int `koanf:"maxInstances" default:"16" doc:"per-session instances of one upstream (scope session, or auto once switched) running at once; a client session over the cap gets a tool error"`
	MaxAllInstances int `koanf:"maxTotalInstances" default:"64" doc:"per-session instances of all upstreams together running at once"`
}

// Reconnect is the reconnect section: the backoff between the connection
// attempts of an upstream.
type Reconnect struct {
	InitialDelay time.Duration `koanf:"initialDelay" default:"5s" doc:"first reconnect delay"`
	Multiplier   float64       `koanf:"multiplier" default:"2" doc:"delay growth per failed attempt"`
	MaxDelay     time.Duration `koanf:"maxDelay" default:"60s" doc:"longest delay"`
	Jitter       float64       `koanf:"jitter" default:"0.25" doc:"random spread of each delay (±25%)"`
	MaxAttempts  int           `koanf:"maxAttempts" default:"5" doc:"failed attempts in a row before an upstream stays FAILED until it is called or connected (-1: never give up)"`
}

// Upstream returns the schedule as the upstream package takes it.
func (r Reconnect) Upstream() upstream.Backoff {
	return upstream.Backoff{Initial: r.InitialDelay, Multiplier: r.Multiplier, Max: r.MaxDelay, Jitter: r.Jitter, MaxAttempts: r.MaxAttempts}
}

// Health is the health section.
type Health struct {
	// HealthInterval is -1 when the file says 0 (never ping).
	HealthInterval time.Duration `koanf:"interval" default:"30s" doc:"ping idle upstreams this often (0: never)"`
	HealthFailures int           `koanf:"failures" default:"3" doc:"failed pings in a row before an upstream is reconnected"`
}

// Security is the security section.
type Security struct {
	MaxToolOutput      int      `koanf:"maxToolOutputLength" default:"50000" doc:"characters of text one tools/call result may carry; longer text is cut with a visible marker (0: no limit)"`
	AllowedServerNames []string `koanf:"allowedServerNames" doc:"when set, the only upstream names the hub registers or runs (config, clients, command line)"`
}

// Admin is the admin section.
type Admin struct {
	AdminTools    string `koanf:"tools" default:"on" enum:"on,read-only,off" doc:"hub_* admin tools for clients: on, read-only (list and get only) or off"`
	AdminApproval string `koanf:"approval" default:"ask" enum:"ask,auto" doc:"ask: nothing a client registers runs before a person approves its exact launch spec (in the client, or with mcp-hub approve); auto: approve everything (dangerous: a prompt-injected model could run any command)"`
}

// HTTP is the http section.
type HTTP struct {
	HTTPListen         string        `koanf:"listen" flag:"http" doc:"serve MCP over HTTP on this address (host:port), as --http does; empty: stdio only"`
	HTTPToken          Source        `koanf:"token" doc:"bearer token clients must send; may be \"${VAR}\" or \"file:<path>\"; empty: generated once into <dataDir>/http-token"`
	HTTPNoAuth         bool          `koanf:"noAuth" flag:"http-no-auth" default:"false" doc:"no token for MCP clients and the API (for tools that cannot send headers); loopback addresses only; Host and Origin checks stay on; approving over the API still needs http.token (or <dataDir>/http-token), else it is refused"`
	HTTPAllowRemote    bool          `koanf:"allowRemote" flag:"http-allow-remote" default:"false" doc:"allow a non-loopback listen address (then a token is mandatory)"`
	HTTPAllowedHosts   []string      `koanf:"allowedHosts" doc:"Host names accepted besides localhost, 127.0.0.1 and ::1 (DNS-rebinding protection)"`
	HTTPAllowedOrigins []string      `koanf:"allowedOrigins" doc:"browser Origins (scheme://host[:port]) accepted besides loopback ones"`
	HTTPMaxSessions    int           `koanf:"maxSessions" default:"64" doc:"concurrent client sessions; a new one replaces the least recently used idle one, and gets 503 when all are busy"`
	HTTPSessionIdle    time.Duration `koanf:"sessionIdleTimeout" default:"30m" doc:"close client sessions idle this long"`
	HTTPMaxBodyBytes   int           `koanf:"maxBodyBytes" default:"16777216" doc:"largest request body; larger gets 413"`
	HTTPReadHeader     time.Duration `koanf:"readHeaderTimeout" default:"5s" doc:"time a client has to send its request headers (slowloris protection)"`
	HTTPBodyTimeout    time.Duration `koanf:"bodyTimeout" default:"30s" doc:"time a client has to send a request body"`
}

// CodeMode is the codeMode section: hub_run_code, the tool that runs a
// model's JavaScript against the hub's tools. "codeMode: on" is short for
// "codeMode: {mode: on}".
type CodeMode struct {
	CodeModeMode      string        `koanf:"mode" default:"off" enum:"off,on" doc:"on: every client gets hub_run_code; off: none does, unless the person at a client turns it on for their session (hub_enable_code_mode, with admin.tools on)"`
	CodeTimeout       time.Duration `koanf:"timeout" default:"30s" doc:"wall time of one script, its tool calls included (time spent waiting for a person's answer is not counted)"`
	CodeMemoryMiB     int           `koanf:"memoryLimit" default:"64" doc:"MiB of JavaScript heap one script may use; a script past it is stopped"`
	CodeMaxCalls      int           `koanf:"maxCalls" default:"100" doc:"tool calls one script may make (its searchTools calls have a budget of the same size)"`
	CodeMaxConcurrent int           `koanf:"maxConcurrent" default:"4" doc:"scripts the hub runs at once; one more gets a tool error"`
}

// ToolPolicy is the toolPolicy section: per tool, whether a call goes
// ahead, asks the person first, or is refused (package toolpolicy).
type ToolPolicy struct {
	ToolPolicyDefault string            `koanf:"default" default:"allow" enum:"allow,ask,deny" doc:"what a call no rule matches gets"`
	ToolPolicyRules   map[string]string `koanf:"rules" doc:"server/tool patterns (* globs) to allow, ask or deny, e.g. {\"*/delete_*\": deny, \"filesystem/write_*\": ask}; the most specific pattern wins"`
}

// Auth is the auth section: the HTTP front as an OAuth 2.1 resource server,
// taking the access tokens of a team's identity provider instead of
// http.token.
type Auth struct {
	AuthIssuer         string   `koanf:"issuer" doc:"issuer of the identity provider whose access tokens (JWTs) the HTTP front takes instead of http.token (https, or http on loopback); empty: no identity provider"`
	AuthAudience       string   `koanf:"audience" doc:"the hub's resource identifier tokens must be issued for (aud): the public URL of its /mcp endpoint, e.g. https://hub.example.com/mcp"`
	AuthJWKSURL        string   `koanf:"jwksUrl" doc:"the issuer's JSON Web Key Set; empty: the jwks_uri of the issuer's metadata"`
	AuthRequiredScopes []string `koanf:"requiredScopes" doc:"scopes every token must carry"`
	AuthAdminScope     string   `koanf:"adminScope" default:"mcp-hub:admin" doc:"scope a token needs for admin changes (the hub_* tools that change servers, the admin API's writes); empty: none beyond requiredScopes"`
}

// AuthEnabled reports whether the auth section names an identity provider.
func (a Auth) AuthEnabled() bool { return a.AuthIssuer != "" }

// Env is the env section.
type Env struct {
	InheritEnv []string `koanf:"inherit" default:"[]" doc:"extra variables stdio upstreams inherit from the hub (besides PATH, HOME, USER, LANG, LC_*, TMPDIR, …)"`
}

// Telemetry is the telemetry section: where the hub exports its traces
// (OpenTelemetry, OTLP). The standard OTEL_* variables take precedence
// over it, and configure what it does not name.
type Telemetry struct {
	TelemetryEndpoint           string            `koanf:"endpoint" doc:"OTLP endpoint the hub exports traces to, as OTEL_EXPORTER_OTLP_ENDPOINT says it (http://collector:4318, or :4317 for grpc); empty: no traces, unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT names one"`
	TelemetryProtocol           string            `koanf:"protocol" default:"http/protobuf" enum:"http/protobuf,grpc" doc:"OTLP protocol (OTEL_EXPORTER_OTLP_PROTOCOL takes precedence)"`
	TelemetryHeaders            map[string]Source `koanf:"headers" doc:"headers sent with every export (a collector's API key); values may be \"${VAR}\" or \"file:<path>\""`
	TelemetryServiceName        string            `koanf:"serviceName" default:"mcp-hub" doc:"service.name of the hub's spans (OTEL_SERVICE_NAME takes precedence)"`
	TelemetryResourceAttributes map[string]string `koanf:"resourceAttributes" doc:"resource attributes such as deployment.environment (OTEL_RESOURCE_ATTRIBUTES takes precedence)"`
	TelemetrySampler            string            `koanf:"sampler" enum:"always_on,always_off,traceidratio,parentbased_always_on,parentbased_always_off,parentbased_traceidratio" doc:"sampler, as OTEL_TRACES_SAMPLER (which takes precedence); empty: parentbased_always_on"`
	TelemetrySamplerArg         string            `koanf:"samplerArg" doc:"sampler argument: the ratio of traceidratio samplers (0 to 1)"`
}

// InEffect names the config file in effect for people: its path, or
// "none" and why (see [Config.WhyNone]).
func (c *Config) InEffect() string {
	switch {
	case c.File != "":
		return c.File
	case c.WhyNone() != "":
		return "none (" + c.WhyNone() + ")"
	}
	return "none"
}

// WhyNone says why no config file is in effect: the default file does not
// exist, and a file of its name in the wrong directory is not read. It is
// "" when a file is in effect, or when no default file was looked for.
func (c *Config) WhyNone() string {
	switch {
	case c.File != "" || c.Missing == "":
		return ""
	case c.Misplaced != "":
		return fmt.Sprintf("%s does not exist; %s is not read: move it to %s", c.Missing, c.Misplaced, c.Missing)
	}
	return c.Missing + " does not exist"
}

// Source is a value that may say where it comes from: "${VAR}" (the hub's
// environment variable VAR) or "file:<path>" (the file's content). It is
// kept as written and resolved when it is used, so a configuration never
// holds the secret itself.
type Source string

// Resolve returns the value: a file's content, the environment variables
// it names (lookup is os.LookupEnv in production) or the literal.
func (s Source) Resolve(lookup func(string) (string, bool)) (string, error) {
	return upstream.ResolveValue(string(s), lookup)
}

// Server is one upstream declared in the config file.
type Server struct {
	Spec     upstream.Spec
	Disabled bool
}

// serverEntry is the shape of one entry of mcpServers. Entries of a
// client's config file (mcp-hub import) are read with it too.
type serverEntry struct {
	Command          string            `koanf:"command" doc:"stdio: the program to run (never through a shell)"`
	Args             []string          `koanf:"args" doc:"stdio: its arguments"`
	Env              map[string]string `koanf:"env" doc:"stdio: environment variables; values may be \"${VAR}\" (from the hub's environment) or \"file:<path>\""`
	Cwd              string            `koanf:"cwd" doc:"stdio: working directory"`
	URL              string            `koanf:"url" doc:"sse/http: the endpoint"`
	Headers          map[string]string `koanf:"headers" doc:"sse/http: headers sent with every request; values as for env"`
	OAuth            oauthEntry        `koanf:"oauth"`
	Type             string            `koanf:"type" enum:"stdio,sse,http,streamable-http,streamableHttp" doc:"transport, as Claude Desktop spells it"`
	Transport        string            `koanf:"transport" enum:"stdio,sse,http" doc:"transport: stdio, sse or http (inferred when absent: command → stdio, URL ending /sse → sse, other URL → http)"`
	Description      string            `koanf:"description" doc:"free text"`
	Disabled         bool              `koanf:"disabled" default:"false" doc:"register but never connect"`
	Tools            toolsEntry        `koanf:"tools"`
	InitTimeout      time.Duration     `koanf:"initTimeout" doc:"overrides timeouts.initialize"`
	ListTimeout      time.Duration     `koanf:"listTimeout" doc:"overrides timeouts.list"`
	CallTimeout      time.Duration     `koanf:"callTimeout" doc:"overrides timeouts.call"`
	ProtocolVersion  string            `koanf:"protocolVersion" doc:"overrides protocolVersion"`
	Start            string            `koanf:"start" enum:"eager,lazy" doc:"\"lazy\": start on the first call instead of at once; \"eager\" with scope session: start each client session's instance when the session starts, not on its first use"`
	IdleTimeout      time.Duration     `koanf:"idleTimeout" doc:"stop a stdio upstream unused for this long (0: never)"`
	MaxInFlight      int               `koanf:"maxInFlight" doc:"overrides limits.maxInFlight"`
	Scope            string            `koanf:"scope" enum:"shared,session,auto" default:"shared" doc:"shared: one instance serves every client session; session: each client session gets its own (servers that keep per-user state, or ask the client things over stdio); auto: shared until the server asks a client something while several sessions wait on it (the hub cannot tell which it is for), then one per session for sessions that start after that"`
	MaxInstances     int               `koanf:"maxInstances" doc:"overrides limits.maxInstances for this upstream"`
	AllowSampling    *bool             `koanf:"allowSampling" default:"true" doc:"let it ask the calling client for an LLM completion (sampling/createMessage)"`
	AllowElicitation *bool             `koanf:"allowElicitation" default:"true" doc:"let it ask the calling client's user for input (elicitation/create; never for secrets)"`
	AllowRoots       *bool             `koanf:"allowRoots" default:"true" doc:"let it ask the calling client for its roots (roots/list)"`
	Roots            []string          `koanf:"roots" doc:"the roots the hub gives it when it asks (roots/list) and no client session answers (it asks when no session waits on it, or the client has none): directories (absolute, or ~/…) or file:// URIs; none: an empty list"`
	Trust            string            `koanf:"trust" enum:"pin,warn,off" default:"warn" doc:"a tool, prompt or resource template that differs from what was pinned (its first listing, or what a person approved since), or is new: pin quarantines it until mcp-hub approve, warn serves it with a log line and a flag, off checks nothing"`
}

// oauthEntry is an upstream's OAuth section (upstream.OAuth); every key is
// optional: without any, the hub discovers everything and registers itself.
type oauthEntry struct {
	ClientID          string   `koanf:"clientId" doc:"sse/http: an OAuth client id registered with the authorization server"`
	ClientSecret      string   `koanf:"clientSecret" doc:"sse/http: its secret, as \"${VAR}\" or \"file:<path>\" (never the secret itself)"`
	Scopes            []string `koanf:"scopes" doc:"sse/http: OAuth scopes to request on top of what the server asks for"`
	ClientMetadataURL string   `koanf:"clientMetadataUrl" doc:"sse/http: https URL of the hub's OAuth client id metadata document"`
	RedirectPort      int      `koanf:"redirectPort" doc:"sse/http: port of the OAuth loopback redirect http://127.0.0.1:PORT/callback (0: a free one)"`
}

func (o oauthEntry) spec() *upstream.OAuth {
	if o.ClientID == "" && o.ClientSecret == "" && len(o.Scopes) == 0 && o.ClientMetadataURL == "" && o.RedirectPort == 0 {
		return nil
	}
	return &upstream.OAuth{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes,
		ClientMetadataURL: o.ClientMetadataURL, RedirectPort: o.RedirectPort}
}

type toolsEntry struct {
	Allow []string `koanf:"allow" doc:"expose only tools matching one of these '*' globs"`
	Deny  []string `koanf:"deny" doc:"hide tools matching one of these '*' globs"`
}

// document is the whole file: the settings and the upstreams.
type document struct {
	Config     `koanf:",squash"`
	MCPServers map[string]serverEntry `koanf:"mcpServers" doc:"the upstreams, by name (the Claude Desktop shape; \"servers\" is accepted too)"`
}

// Error is a configuration error that names the file and the key.
type Error struct {
	File string
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	where := "config"
	if e.File != "" {
		where = "config " + e.File
	}
	if e.Key != "" { // bounded: a key or value of the file may be a megabyte
		return redact.Bound(fmt.Sprintf("%s: %s: %s", where, e.Key, e.Msg))
	}
	return redact.Bound(fmt.Sprintf("%s: %s", where, e.Msg))
}
