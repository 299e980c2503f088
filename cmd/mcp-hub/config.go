package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Config is the hub's whole configuration, after defaults, the config file,
// MCP_HUB_* environment variables and command-line flags (in rising
// precedence) were merged and validated.
type Config struct {
	File      string // the config file read, "" when none
	LogLevel  string
	LogFormat string
	DataDir   string

	CatalogPolicy    string
	CatalogSeparator string
	FirstListWait    time.Duration
	ConfigPoll       time.Duration

	ProtocolVersion string
	InitTimeout     time.Duration
	ListTimeout     time.Duration
	CallTimeout     time.Duration
	MaxInFlight     int
	MaxMessageBytes int
	ShutdownGrace   time.Duration
	Backoff         upstream.Backoff
	HealthInterval  time.Duration
	HealthFailures  int
	MaxSpawns       int
	InheritEnv      []string
	AdminTools      string
	AdminApproval   string

	HTTPListen         string
	HTTPToken          string
	HTTPNoAuth         bool
	HTTPAllowRemote    bool
	HTTPAllowedHosts   []string
	HTTPAllowedOrigins []string
	HTTPMaxSessions    int
	HTTPSessionIdle    time.Duration
	HTTPMaxBodyBytes   int
	HTTPReadHeader     time.Duration
	HTTPBodyTimeout    time.Duration
	MaxToolOutput      int
	AllowedServerNames []string

	// Servers are the upstreams the file declares, sorted by name.
	Servers []ServerConfig
}

// ServerConfig is one upstream declared in the config file.
type ServerConfig struct {
	Spec     upstream.Spec
	Disabled bool
}

// keyKind is the type a config key holds.
type keyKind int

const (
	kString keyKind = iota
	kDuration
	kInt
	kFloat
	kBool
	kStrings
	kStringMap
	kSection // a map of further keys
)

func (k keyKind) String() string {
	return [...]string{"a string", `a duration such as "30s"`, "an integer", "a number", "true or false",
		"a list of strings", "a map of strings", "a section"}[k]
}

// configKey documents one key. Keys under mcpServers use "*" for the server
// name. The table is the single source of truth: decoding, validation,
// hub.yaml.example and the README are checked against it.
type configKey struct {
	Key     string
	Kind    keyKind
	Default string
	Doc     string
	Enum    []string
}

var configKeys = []configKey{
	{Key: "logLevel", Kind: kString, Default: "info", Doc: "log level", Enum: []string{"debug", "info", "warn", "error"}},
	{Key: "logFormat", Kind: kString, Default: "text", Doc: "log format on stderr", Enum: []string{"text", "json"}},
	{Key: "dataDir", Kind: kString, Default: "<user data dir>/mcp-hub", Doc: "where hub.db and http-token live"},
	{Key: "catalog", Kind: kSection},
	{Key: "catalog.policy", Kind: kString, Default: "merge", Doc: "merge: names unchanged, first upstream by name wins a collision; prefix: <server><separator><tool>", Enum: []string{"merge", "prefix"}},
	{Key: "catalog.separator", Kind: kString, Default: "__", Doc: "separator of prefixed names ([A-Za-z0-9_-], 1-8 characters)"},
	{Key: "firstListWait", Kind: kDuration, Default: "10s", Doc: "how long a session's first tools/list waits for upstreams still connecting (0: no wait)"},
	{Key: "configPoll", Kind: kDuration, Default: "1s", Doc: "how often the running hub checks its config file for edits and applies them to its servers (0: never)"},
	{Key: "protocolVersion", Kind: kString, Default: upstream.DefaultProtocolVersion, Doc: "protocol version asked of upstreams"},
	{Key: "timeouts", Kind: kSection},
	{Key: "timeouts.initialize", Kind: kDuration, Default: "30s", Doc: "spawn/connect plus initialize"},
	{Key: "timeouts.list", Kind: kDuration, Default: "15s", Doc: "listing tools, prompts and resources"},
	{Key: "timeouts.call", Kind: kDuration, Default: "120s", Doc: "one call"},
	{Key: "timeouts.shutdownGrace", Kind: kDuration, Default: "2s", Doc: "each wait of the stdio shutdown: after closing stdin, and after SIGTERM"},
	{Key: "limits", Kind: kSection},
	{Key: "limits.maxInFlight", Kind: kInt, Default: "10", Doc: "concurrent calls per upstream; more wait their turn"},
	{Key: "limits.maxMessageBytes", Kind: kInt, Default: "16777216", Doc: "largest message read from an upstream or a client"},
	{Key: "limits.maxConcurrentSpawns", Kind: kInt, Default: "4", Doc: "connection attempts running at once"},
	{Key: "reconnect", Kind: kSection},
	{Key: "reconnect.initialDelay", Kind: kDuration, Default: "5s", Doc: "first reconnect delay"},
	{Key: "reconnect.multiplier", Kind: kFloat, Default: "2", Doc: "delay growth per failed attempt"},
	{Key: "reconnect.maxDelay", Kind: kDuration, Default: "60s", Doc: "longest delay"},
	{Key: "reconnect.jitter", Kind: kFloat, Default: "0.25", Doc: "random spread of each delay (±25%)"},
	{Key: "reconnect.maxAttempts", Kind: kInt, Default: "5", Doc: "failed attempts in a row before an upstream stays FAILED until it is called or connected (-1: never give up)"},
	{Key: "health", Kind: kSection},
	{Key: "health.interval", Kind: kDuration, Default: "30s", Doc: "ping idle upstreams this often (0: never)"},
	{Key: "health.failures", Kind: kInt, Default: "3", Doc: "failed pings in a row before an upstream is reconnected"},
	{Key: "security", Kind: kSection},
	{Key: "security.maxToolOutputLength", Kind: kInt, Default: "50000", Doc: "characters of text one tools/call result may carry; longer text is cut with a visible marker (0: no limit)"},
	{Key: "security.allowedServerNames", Kind: kStrings, Doc: "when set, the only upstream names the hub registers or runs (config, clients, command line)"},
	{Key: "admin", Kind: kSection},
	{Key: "admin.tools", Kind: kString, Default: "on", Doc: "hub_* admin tools for clients: on, read-only (list and get only) or off", Enum: []string{"on", "read-only", "off"}},
	{Key: "admin.approval", Kind: kString, Default: "ask", Doc: "ask: nothing a client registers runs before a person approves its exact launch spec (in the client, or with mcp-hub approve); auto: approve everything (dangerous: a prompt-injected model could run any command)", Enum: []string{"ask", "auto"}},
	{Key: "http", Kind: kSection},
	{Key: "http.listen", Kind: kString, Doc: "serve MCP over HTTP on this address (host:port), as --http does; empty: stdio only"},
	{Key: "http.token", Kind: kString, Doc: "bearer token clients must send; may be \"${VAR}\" or \"file:<path>\"; empty: generated once into <dataDir>/http-token"},
	{Key: "http.noAuth", Kind: kBool, Default: "false", Doc: "no token for MCP clients and the API (for tools that cannot send headers); loopback addresses only; Host and Origin checks stay on; approving over the API still needs http.token (or <dataDir>/http-token), else it is refused"},
	{Key: "http.allowRemote", Kind: kBool, Default: "false", Doc: "allow a non-loopback listen address (then a token is mandatory)"},
	{Key: "http.allowedHosts", Kind: kStrings, Doc: "Host names accepted besides localhost, 127.0.0.1 and ::1 (DNS-rebinding protection)"},
	{Key: "http.allowedOrigins", Kind: kStrings, Doc: "browser Origins (scheme://host[:port]) accepted besides loopback ones"},
	{Key: "http.maxSessions", Kind: kInt, Default: "64", Doc: "concurrent client sessions; a new one replaces the least recently used idle one, and gets 503 when all are busy"},
	{Key: "http.sessionIdleTimeout", Kind: kDuration, Default: "30m", Doc: "close client sessions idle this long"},
	{Key: "http.maxBodyBytes", Kind: kInt, Default: "16777216", Doc: "largest request body; larger gets 413"},
	{Key: "http.readHeaderTimeout", Kind: kDuration, Default: "5s", Doc: "time a client has to send its request headers (slowloris protection)"},
	{Key: "http.bodyTimeout", Kind: kDuration, Default: "30s", Doc: "time a client has to send a request body"},
	{Key: "env", Kind: kSection},
	{Key: "env.inherit", Kind: kStrings, Default: "[]", Doc: "extra variables stdio upstreams inherit from the hub (besides PATH, HOME, USER, LANG, LC_*, TMPDIR, …)"},
	{Key: "mcpServers", Kind: kSection, Doc: "the upstreams, by name (the Claude Desktop shape; \"servers\" is accepted too)"},
	{Key: "mcpServers.*", Kind: kSection},
	{Key: "mcpServers.*.command", Kind: kString, Doc: "stdio: the program to run (never through a shell)"},
	{Key: "mcpServers.*.args", Kind: kStrings, Doc: "stdio: its arguments"},
	{Key: "mcpServers.*.env", Kind: kStringMap, Doc: "stdio: environment variables; values may be \"${VAR}\" (from the hub's environment) or \"file:<path>\""},
	{Key: "mcpServers.*.cwd", Kind: kString, Doc: "stdio: working directory"},
	{Key: "mcpServers.*.url", Kind: kString, Doc: "sse/http: the endpoint"},
	{Key: "mcpServers.*.headers", Kind: kStringMap, Doc: "sse/http: headers sent with every request; values as for env"},
	{Key: "mcpServers.*.type", Kind: kString, Doc: "transport, as Claude Desktop spells it", Enum: []string{"stdio", "sse", "http", "streamable-http", "streamableHttp"}},
	{Key: "mcpServers.*.transport", Kind: kString, Doc: "transport: stdio, sse or http (inferred when absent: command → stdio, URL ending /sse → sse, other URL → http)", Enum: []string{"stdio", "sse", "http"}},
	{Key: "mcpServers.*.description", Kind: kString, Doc: "free text"},
	{Key: "mcpServers.*.disabled", Kind: kBool, Default: "false", Doc: "register but never connect"},
	{Key: "mcpServers.*.tools", Kind: kSection},
	{Key: "mcpServers.*.tools.allow", Kind: kStrings, Doc: "expose only tools matching one of these '*' globs"},
	{Key: "mcpServers.*.tools.deny", Kind: kStrings, Doc: "hide tools matching one of these '*' globs"},
	{Key: "mcpServers.*.initTimeout", Kind: kDuration, Doc: "overrides timeouts.initialize"},
	{Key: "mcpServers.*.listTimeout", Kind: kDuration, Doc: "overrides timeouts.list"},
	{Key: "mcpServers.*.callTimeout", Kind: kDuration, Doc: "overrides timeouts.call"},
	{Key: "mcpServers.*.protocolVersion", Kind: kString, Doc: "overrides protocolVersion"},
	{Key: "mcpServers.*.start", Kind: kString, Doc: "\"lazy\": start on the first call instead of at once", Enum: []string{"eager", "lazy"}},
	{Key: "mcpServers.*.idleTimeout", Kind: kDuration, Doc: "stop a stdio upstream unused for this long (0: never)"},
	{Key: "mcpServers.*.maxInFlight", Kind: kInt, Doc: "overrides limits.maxInFlight"},
	{Key: "mcpServers.*.allowSampling", Kind: kBool, Default: "true", Doc: "let it ask the calling client for an LLM completion (sampling/createMessage)"},
	{Key: "mcpServers.*.allowElicitation", Kind: kBool, Default: "true", Doc: "let it ask the calling client's user for input (elicitation/create; never for secrets)"},
	{Key: "mcpServers.*.allowRoots", Kind: kBool, Default: "true", Doc: "let it ask the calling client for its roots (roots/list)"},
}

// foreignTopLevel are keys of client config files (Claude Desktop, Cursor,
// VS Code) that the hub ignores, so those files can be used unchanged.
var foreignTopLevel = []string{"globalShortcut", "preferences", "inputs", "isUsingBuiltInNodeForMcp"}

// ConfigError is a configuration error that names the file and the key.
type ConfigError struct {
	File string
	Key  string
	Msg  string
}

func (e *ConfigError) Error() string {
	where := "config"
	if e.File != "" {
		where = "config " + e.File
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// flagKeys maps command-line flags to config keys.
var flagKeys = map[string]string{
	"data-dir":          "dataDir",
	"http":              "http.listen",
	"http-no-auth":      "http.noAuth",
	"http-allow-remote": "http.allowRemote",
	"log-level":         "logLevel",
	"log-format":        "logFormat",
	"catalog-policy":    "catalog.policy",
	"first-list-wait":   "firstListWait",
}

// addConfigFlags defines the flags every command accepts.
func addConfigFlags(fs *pflag.FlagSet) {
	fs.String("config", "", "config file (YAML or JSON; also $MCP_HUB_CONFIG; default <user config dir>/mcp-hub/hub.yaml)")
	fs.String("data-dir", "", "data directory (also $MCP_HUB_DATA_DIR)")
	fs.String("log-level", "", "debug, info, warn or error (also $MCP_HUB_LOG_LEVEL)")
	fs.String("log-format", "", "text or json (also $MCP_HUB_LOG_FORMAT)")
	fs.String("catalog-policy", "", "merge or prefix (also $MCP_HUB_CATALOG__POLICY)")
	fs.Duration("first-list-wait", 0, "bound on the first tools/list waiting for upstreams (also $MCP_HUB_FIRST_LIST_WAIT)")
}

// envKey turns MCP_HUB_CATALOG__POLICY into catalog.policy and
// MCP_HUB_DATA_DIR into dataDir: "__" separates levels, "_" separates words.
func envKey(name string) string {
	rest, ok := strings.CutPrefix(name, "MCP_HUB_")
	if !ok || rest == "" {
		return ""
	}
	var parts []string
	for _, seg := range strings.Split(rest, "__") {
		words := strings.Split(strings.ToLower(seg), "_")
		for i := 1; i < len(words); i++ {
			if words[i] != "" {
				words[i] = strings.ToUpper(words[i][:1]) + words[i][1:]
			}
		}
		parts = append(parts, strings.Join(words, ""))
	}
	return strings.Join(parts, ".")
}

// defaultConfigFile is <user config dir>/mcp-hub/hub.yaml.
func defaultConfigFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcp-hub", "hub.yaml")
}

// loadConfig merges defaults < config file < MCP_HUB_* env < flags the user
// set, and validates the result. environ is os.Environ in production.
func loadConfig(flags *pflag.FlagSet, environ []string) (*Config, error) {
	lookup := func(k string) string {
		for _, kv := range environ {
			if n, v, ok := strings.Cut(kv, "="); ok && n == k {
				return v
			}
		}
		return ""
	}
	path, explicit := "", false
	if f := flags.Lookup("config"); f != nil && f.Changed {
		path, explicit = f.Value.String(), true
	} else if v := lookup("MCP_HUB_CONFIG"); v != "" {
		path, explicit = v, true
	} else {
		path = defaultConfigFile()
	}

	k := koanf.New(".")
	cfgFile := ""
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			var parser koanf.Parser = yaml.Parser()
			if strings.EqualFold(filepath.Ext(path), ".json") {
				parser = json.Parser()
			}
			if err := k.Load(file.Provider(path), parser); err != nil {
				return nil, &ConfigError{File: path, Msg: describeParseError(err)}
			}
			cfgFile = path
		} else if explicit || !errors.Is(err, fs.ErrNotExist) {
			return nil, &ConfigError{File: path, Msg: err.Error()}
		}
	}
	envProvider := env.Provider(".", env.Opt{
		Prefix: "MCP_HUB_",
		TransformFunc: func(key, value string) (string, any) {
			if key == "MCP_HUB_CONFIG" {
				return "", nil // names the file; not a key
			}
			k := envKey(key)
			if ck, ok := schemaKey(k); ok && ck.Kind == kStrings {
				var list []any // lists come comma separated in the environment
				for _, v := range splitList(value) {
					list = append(list, v)
				}
				return k, list
			}
			return k, value
		},
		EnvironFunc: func() []string { return environ },
	})
	if err := k.Load(envProvider, nil); err != nil {
		return nil, &ConfigError{Msg: "environment: " + err.Error()}
	}
	flagProvider := posflag.ProviderWithFlag(flags, ".", k, func(f *pflag.Flag) (string, any) {
		key, ok := flagKeys[f.Name]
		if !ok || !f.Changed {
			return "", nil
		}
		return key, posflag.FlagVal(flags, f)
	})
	if err := k.Load(flagProvider, nil); err != nil {
		return nil, &ConfigError{Msg: "flags: " + err.Error()}
	}
	return decodeConfig(cfgFile, k.Raw())
}

var lineColRE = regexp.MustCompile(`line \d+`)

func describeParseError(err error) string {
	msg := err.Error()
	if !lineColRE.MatchString(msg) {
		return "cannot parse: " + msg
	}
	return msg
}

// decodeConfig validates the merged raw map against configKeys.
func decodeConfig(file string, raw map[string]any) (*Config, error) {
	d := decoder{file: file}
	// Client configs spell the upstream map "servers" (VS Code) too.
	if s, ok := raw["servers"]; ok {
		if _, dup := raw["mcpServers"]; dup {
			return nil, &ConfigError{File: file, Key: "servers", Msg: "use either mcpServers or servers, not both"}
		}
		raw["mcpServers"] = s
		delete(raw, "servers")
	}
	if err := d.walk("", raw); err != nil {
		return nil, err
	}
	c := &Config{File: file}
	c.LogLevel = d.str("logLevel")
	c.LogFormat = d.str("logFormat")
	c.DataDir = d.str("dataDir")
	c.CatalogPolicy = d.str("catalog.policy")
	c.CatalogSeparator = d.str("catalog.separator")
	c.FirstListWait = d.dur("firstListWait")
	c.ConfigPoll = d.dur("configPoll")
	c.ProtocolVersion = d.str("protocolVersion")
	c.InitTimeout = d.dur("timeouts.initialize")
	c.ListTimeout = d.dur("timeouts.list")
	c.CallTimeout = d.dur("timeouts.call")
	c.ShutdownGrace = d.dur("timeouts.shutdownGrace")
	c.MaxInFlight = d.int("limits.maxInFlight")
	c.MaxMessageBytes = d.int("limits.maxMessageBytes")
	c.MaxSpawns = d.int("limits.maxConcurrentSpawns")
	c.Backoff = upstream.Backoff{
		Initial:     d.dur("reconnect.initialDelay"),
		Multiplier:  d.float("reconnect.multiplier"),
		Max:         d.dur("reconnect.maxDelay"),
		Jitter:      d.float("reconnect.jitter"),
		MaxAttempts: d.int("reconnect.maxAttempts"),
	}
	c.HealthInterval = d.dur("health.interval")
	if c.HealthInterval == 0 {
		c.HealthInterval = -1 // 0 in the file means never
	}
	c.HealthFailures = d.int("health.failures")
	c.InheritEnv = d.strs("env.inherit")
	c.AdminTools = d.str("admin.tools")
	c.AdminApproval = d.str("admin.approval")
	c.HTTPListen = d.str("http.listen")
	c.HTTPToken = d.str("http.token")
	c.HTTPNoAuth = d.bool("http.noAuth")
	c.HTTPAllowRemote = d.bool("http.allowRemote")
	c.HTTPAllowedHosts = d.strs("http.allowedHosts")
	c.HTTPAllowedOrigins = d.strs("http.allowedOrigins")
	c.HTTPMaxSessions = d.int("http.maxSessions")
	c.HTTPSessionIdle = d.dur("http.sessionIdleTimeout")
	c.HTTPMaxBodyBytes = d.int("http.maxBodyBytes")
	c.HTTPReadHeader = d.dur("http.readHeaderTimeout")
	c.HTTPBodyTimeout = d.dur("http.bodyTimeout")
	c.MaxToolOutput = d.int("security.maxToolOutputLength")
	c.AllowedServerNames = d.strs("security.allowedServerNames")
	if d.err != nil {
		return nil, d.err
	}
	if c.CatalogSeparator != "" && !regexp.MustCompile(`^[A-Za-z0-9_-]{1,8}$`).MatchString(c.CatalogSeparator) {
		return nil, &ConfigError{File: file, Key: "catalog.separator", Msg: "must be 1 to 8 characters of [A-Za-z0-9_-]"}
	}
	if c.Backoff.Multiplier != 0 && c.Backoff.Multiplier < 1 {
		return nil, &ConfigError{File: file, Key: "reconnect.multiplier", Msg: "must be at least 1"}
	}
	if c.Backoff.Jitter < 0 || c.Backoff.Jitter >= 1 {
		return nil, &ConfigError{File: file, Key: "reconnect.jitter", Msg: "must be in [0, 1)"}
	}
	servers, _ := raw["mcpServers"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		sc, err := d.server(name)
		if err != nil {
			return nil, err
		}
		if len(c.AllowedServerNames) > 0 && !slices.Contains(c.AllowedServerNames, name) {
			return nil, &ConfigError{File: file, Key: "mcpServers." + name,
				Msg: fmt.Sprintf("not in security.allowedServerNames (%s)", strings.Join(c.AllowedServerNames, ", "))}
		}
		c.Servers = append(c.Servers, sc)
	}
	return c, nil
}

// decoder checks a raw map against configKeys and collects typed values.
type decoder struct {
	file   string
	values map[string]any // validated leaves by concrete key
	err    error
}

func schemaKey(path string) (configKey, bool) {
	parts := strings.Split(path, ".")
	for _, ck := range configKeys {
		cp := strings.Split(ck.Key, ".")
		if len(cp) != len(parts) {
			continue
		}
		match := true
		for i := range cp {
			if cp[i] != "*" && cp[i] != parts[i] {
				match = false
				break
			}
		}
		if match {
			return ck, true
		}
	}
	return configKey{}, false
}

func (d *decoder) walk(prefix string, m map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		ck, ok := schemaKey(path)
		if !ok {
			if prefix == "" && slices.Contains(foreignTopLevel, k) {
				continue
			}
			msg := "unknown key"
			if s := suggest(path); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return &ConfigError{File: d.file, Key: path, Msg: msg}
		}
		if ck.Kind == kSection {
			sub, ok := v.(map[string]any)
			if !ok {
				if v == nil {
					continue
				}
				return &ConfigError{File: d.file, Key: path, Msg: fmt.Sprintf("expected a section (a map of keys), got %s", describe(v))}
			}
			if strings.HasPrefix(path, "mcpServers.") && strings.Count(path, ".") == 1 {
				if err := upstream.ValidName(k); err != nil {
					return &ConfigError{File: d.file, Key: path, Msg: err.Error()}
				}
			}
			if err := d.walk(path, sub); err != nil {
				return err
			}
			continue
		}
		val, err := coerce(ck, v)
		if err != nil {
			return &ConfigError{File: d.file, Key: path, Msg: err.Error()}
		}
		if d.values == nil {
			d.values = map[string]any{}
		}
		d.values[path] = val
	}
	return nil
}

func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	case bool:
		return fmt.Sprintf("%v", v)
	case nil:
		return "nothing"
	default:
		return fmt.Sprintf("%v", v)
	}
}

// coerce converts a raw value to the key's kind. Strings are accepted for
// every scalar kind (environment variables are strings).
func coerce(ck configKey, v any) (any, error) {
	bad := func() error { return fmt.Errorf("expected %s, got %s", ck.Kind, describe(v)) }
	var out any
	switch ck.Kind {
	case kString:
		switch v := v.(type) {
		case string:
			out = v
		case int, int64, float64, bool:
			out = fmt.Sprint(v)
		default:
			return nil, bad()
		}
	case kDuration:
		switch v := v.(type) {
		case string:
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, bad()
			}
			out = d
		case time.Duration:
			out = v
		case int, int64, float64:
			return nil, fmt.Errorf("expected %s, got the number %v (write \"%vs\" for seconds)", ck.Kind, v, v)
		default:
			return nil, bad()
		}
		if out.(time.Duration) < 0 {
			return nil, errors.New("must not be negative")
		}
	case kInt:
		switch v := v.(type) {
		case int:
			out = v
		case int64:
			out = int(v)
		case float64:
			if v != float64(int(v)) {
				return nil, bad()
			}
			out = int(v)
		case string:
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, bad()
			}
			out = n
		default:
			return nil, bad()
		}
	case kFloat:
		switch v := v.(type) {
		case int:
			out = float64(v)
		case int64:
			out = float64(v)
		case float64:
			out = v
		case string:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, bad()
			}
			out = f
		default:
			return nil, bad()
		}
	case kBool:
		switch v := v.(type) {
		case bool:
			out = v
		case string:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, bad()
			}
			out = b
		default:
			return nil, bad()
		}
	case kStrings:
		switch v := v.(type) {
		case []any:
			ss := make([]string, 0, len(v))
			for i, e := range v {
				s, ok := e.(string)
				if !ok {
					if e == nil {
						return nil, fmt.Errorf("item %d: expected a string, got nothing", i)
					}
					s = fmt.Sprint(e) // numbers in argument lists are fine
				}
				ss = append(ss, s)
			}
			out = ss
		default:
			return nil, bad()
		}
	case kStringMap:
		m, ok := v.(map[string]any)
		if !ok {
			if v == nil {
				return map[string]string{}, nil
			}
			return nil, bad()
		}
		sm := make(map[string]string, len(m))
		for k, e := range m {
			switch e := e.(type) {
			case string:
				sm[k] = e
			case int, int64, float64, bool:
				sm[k] = fmt.Sprint(e)
			default:
				return nil, fmt.Errorf("%s: expected a string, got %s", k, describe(e))
			}
		}
		out = sm
	}
	if len(ck.Enum) > 0 {
		if s, ok := out.(string); ok && !slices.Contains(ck.Enum, s) {
			return nil, fmt.Errorf("expected one of %s, got %q", strings.Join(ck.Enum, ", "), s)
		}
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (d *decoder) get(key string) (any, bool) {
	v, ok := d.values[key]
	return v, ok
}

func (d *decoder) def(key string) string {
	for _, ck := range configKeys {
		if ck.Key == key {
			return ck.Default
		}
	}
	return ""
}

func (d *decoder) str(key string) string {
	if v, ok := d.get(key); ok {
		return v.(string)
	}
	if def := d.def(key); !strings.HasPrefix(def, "<") {
		return def
	}
	return ""
}

func (d *decoder) dur(key string) time.Duration {
	if v, ok := d.get(key); ok {
		return v.(time.Duration)
	}
	if def := d.def(key); def != "" {
		v, _ := time.ParseDuration(def)
		return v
	}
	return 0
}

func (d *decoder) int(key string) int {
	if v, ok := d.get(key); ok {
		return v.(int)
	}
	n, _ := strconv.Atoi(d.def(key))
	return n
}

func (d *decoder) float(key string) float64 {
	if v, ok := d.get(key); ok {
		return v.(float64)
	}
	f, _ := strconv.ParseFloat(d.def(key), 64)
	return f
}

func (d *decoder) bool(key string) bool {
	if v, ok := d.get(key); ok {
		return v.(bool)
	}
	b, _ := strconv.ParseBool(d.def(key))
	return b
}

func (d *decoder) strs(key string) []string {
	if v, ok := d.get(key); ok {
		return v.([]string)
	}
	return nil
}

// decodeServer decodes one upstream entry, raw as a JSON or YAML decoder
// produced it, exactly as decodeConfig decodes the entries of mcpServers:
// the same keys, types, name rules and validation. mcp-hub import uses it
// for the entries of a client's config file. Errors are *ConfigErrors whose
// Key starts with "mcpServers.<name>".
func decodeServer(file, name string, raw any) (ServerConfig, error) {
	if err := upstream.ValidName(name); err != nil {
		return ServerConfig{}, &ConfigError{File: file, Key: "mcpServers." + name, Msg: err.Error()}
	}
	d := decoder{file: file}
	if err := d.walk("mcpServers", map[string]any{name: raw}); err != nil {
		return ServerConfig{}, err
	}
	return d.server(name)
}

// server builds one upstream from mcpServers.<name>.*.
func (d *decoder) server(name string) (ServerConfig, error) {
	p := "mcpServers." + name + "."
	opt := func(k string) (any, bool) { return d.get(p + k) }
	s := upstream.Spec{Name: name}
	if v, ok := opt("command"); ok {
		s.Command = v.(string)
	}
	if v, ok := opt("args"); ok {
		s.Args = v.([]string)
	}
	if v, ok := opt("env"); ok {
		s.Env = v.(map[string]string)
	}
	if v, ok := opt("cwd"); ok {
		s.Cwd = v.(string)
	}
	if v, ok := opt("url"); ok {
		s.URL = v.(string)
	}
	if v, ok := opt("headers"); ok {
		s.Headers = v.(map[string]string)
	}
	if v, ok := opt("description"); ok {
		s.Description = v.(string)
	}
	t, hasType := opt("type")
	tr, hasTransport := opt("transport")
	switch {
	case hasType && hasTransport && normalizeTransport(t.(string)) != tr.(string):
		return ServerConfig{}, &ConfigError{File: d.file, Key: p + "transport", Msg: fmt.Sprintf("disagrees with type %q", t)}
	case hasTransport:
		s.Transport = upstream.Transport(tr.(string))
	case hasType:
		s.Transport = upstream.Transport(normalizeTransport(t.(string)))
	}
	if v, ok := opt("tools.allow"); ok {
		s.Tools.Allow = v.([]string)
	}
	if v, ok := opt("tools.deny"); ok {
		s.Tools.Deny = v.([]string)
	}
	for k, f := range map[string]*upstream.Duration{"initTimeout": &s.InitTimeout, "listTimeout": &s.ListTimeout, "callTimeout": &s.CallTimeout, "idleTimeout": &s.IdleTimeout} {
		if v, ok := opt(k); ok {
			*f = upstream.Duration(v.(time.Duration))
		}
	}
	if v, ok := opt("protocolVersion"); ok {
		s.ProtocolVersion = v.(string)
	}
	if v, ok := opt("start"); ok && v.(string) == "lazy" {
		s.Start = upstream.StartLazy
	}
	if v, ok := opt("maxInFlight"); ok {
		s.MaxInFlight = v.(int)
	}
	for k, f := range map[string]**bool{"allowSampling": &s.AllowSampling, "allowElicitation": &s.AllowElicitation, "allowRoots": &s.AllowRoots} {
		if v, ok := opt(k); ok {
			b := v.(bool)
			*f = &b
		}
	}
	sc := ServerConfig{Spec: s}
	if v, ok := opt("disabled"); ok {
		sc.Disabled = v.(bool)
	}
	if err := sc.Spec.Validate(); err != nil {
		var fe *upstream.FieldError
		if errors.As(err, &fe) {
			return ServerConfig{}, &ConfigError{File: d.file, Key: p + fe.Field, Msg: fe.Msg}
		}
		return ServerConfig{}, &ConfigError{File: d.file, Key: strings.TrimSuffix(p, "."), Msg: err.Error()}
	}
	return sc, nil
}

func normalizeTransport(t string) string {
	switch t {
	case "streamable-http", "streamableHttp":
		return "http"
	}
	return t
}

// suggest returns the documented key closest to an unknown one.
func suggest(path string) string {
	parts := strings.Split(path, ".")
	best, bestDist := "", 3
	for _, ck := range configKeys {
		cp := strings.Split(ck.Key, ".")
		if len(cp) != len(parts) {
			continue
		}
		cand := make([]string, len(cp))
		for i := range cp {
			cand[i] = cp[i]
			if cp[i] == "*" {
				cand[i] = parts[i]
			}
		}
		c := strings.Join(cand, ".")
		if dist := editDistance(strings.ToLower(c), strings.ToLower(path)); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// documentedKeys returns every key of the schema, sorted; tests compare it
// with hub.yaml.example and the README.
func documentedKeys() []string {
	keys := make([]string, 0, len(configKeys))
	for _, ck := range configKeys {
		keys = append(keys, ck.Key)
	}
	sort.Strings(keys)
	return keys
}
