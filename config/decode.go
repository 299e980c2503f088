package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/v2"

	"github.com/mcp-hub/mcp-hub/toolpolicy"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Decoding is two steps. check walks the merged raw map in key order
// against [Keys] and stops at the first unknown key, wrong type or value
// out of its enum, with a message for people. mapstructure (koanf's
// unmarshal) then decodes the checked map into the structs, converting
// values with decodeHook; both use coerce, so they agree on what a value
// means.

// foreignTopLevel are keys of client config files (Claude Desktop, Cursor,
// VS Code) that the hub ignores, so those files can be used unchanged.
var foreignTopLevel = []string{"globalShortcut", "preferences", "inputs", "isUsingBuiltInNodeForMcp"}

var separatorRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,8}$`)

// decode validates the merged raw map and decodes it over the defaults.
// Client configs spell the upstream map "servers" (VS Code) too; errors
// then name the keys as the file spells them.
func decode(file string, raw map[string]any) (*Config, error) {
	s, ok := raw["servers"]
	if !ok {
		return decodeDoc(file, raw)
	}
	if _, dup := raw["mcpServers"]; dup {
		return nil, &Error{File: file, Key: "servers", Msg: "use either mcpServers or servers, not both"}
	}
	raw["mcpServers"] = s
	delete(raw, "servers")
	c, err := decodeDoc(file, raw)
	var ce *Error
	if errors.As(err, &ce) {
		ce.Key = respell(ce.Key)
		ce.Msg = strings.ReplaceAll(ce.Msg, `"mcpServers.`, `"servers.`)
	}
	return c, err
}

// respell spells a key under mcpServers as under servers.
func respell(key string) string {
	if rest, ok := strings.CutPrefix(key, "mcpServers"); ok && (rest == "" || rest[0] == '.') {
		return "servers" + rest
	}
	return key
}

// decodeDoc decodes a document whose upstreams are under mcpServers.
func decodeDoc(file string, raw map[string]any) (*Config, error) {
	for _, k := range foreignTopLevel {
		delete(raw, k)
	}
	hubs := setAsideHubs(file, raw)
	switch v := raw["codeMode"].(type) {
	case string:
		// codeMode: on
		raw["codeMode"] = map[string]any{"mode": v}
	case bool:
		raw["codeMode"] = map[string]any{"mode": map[bool]string{true: "on", false: "off"}[v]}
	}
	if err := check(file, "", raw); err != nil {
		return nil, err
	}
	var doc document
	if err := unmarshal(defaults(), &doc); err != nil {
		return nil, fmt.Errorf("config: defaults: %w", err) // a programming error
	}
	if err := unmarshal(raw, &doc); err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	c := &doc.Config
	c.File = file
	c.HubEntries = hubs
	if c.HealthInterval == 0 {
		c.HealthInterval = -1 // 0 in the file means never
	}
	if err := checkStore(c.Store); err != nil {
		return nil, &Error{File: file, Key: "store", Msg: err.Error()}
	}
	if c.CatalogSeparator != "" && !separatorRE.MatchString(c.CatalogSeparator) {
		return nil, &Error{File: file, Key: "catalog.separator", Msg: "must be 1 to 8 characters of [A-Za-z0-9_-]"}
	}
	if c.Backoff.Multiplier != 0 && c.Backoff.Multiplier < 1 {
		return nil, &Error{File: file, Key: "reconnect.multiplier", Msg: "must be at least 1"}
	}
	if c.Backoff.Jitter < 0 || c.Backoff.Jitter >= 1 {
		return nil, &Error{File: file, Key: "reconnect.jitter", Msg: "must be in [0, 1)"}
	}
	if err := checkAuth(file, c); err != nil {
		return nil, err
	}
	p, err := toolpolicy.New(c.ToolPolicyDefault, c.ToolPolicyRules)
	if err != nil {
		return nil, &Error{File: file, Key: "toolPolicy", Msg: err.Error()}
	}
	if !p.IsZero() {
		c.Policy = p
	}
	if c.CodeTimeout <= 0 || c.CodeMemoryMiB <= 0 || c.CodeMaxCalls <= 0 || c.CodeMaxConcurrent <= 0 {
		return nil, &Error{File: file, Key: "codeMode", Msg: "timeout, memoryLimit, maxCalls and maxConcurrent must be more than 0"}
	}
	for _, name := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		s, err := doc.MCPServers[name].server(file, name)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(hubs, func(h HubEntry) bool { return h.Name == name }) {
			hideHubTools(&s.Spec)
		}
		if len(c.AllowedServerNames) > 0 && !slices.Contains(c.AllowedServerNames, name) {
			return nil, &Error{File: file, Key: "mcpServers." + name,
				Msg: fmt.Sprintf("not in security.allowedServerNames (%s)", strings.Join(c.AllowedServerNames, ", "))}
		}
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

// DecodeServer decodes one upstream entry, raw as a JSON or YAML decoder
// produced it, exactly as [Load] decodes the entries of mcpServers: the
// same keys, types, name rules and validation. mcp-hub import uses it for
// the entries of a client's config file. Errors are [*Error]s whose Key
// starts with "mcpServers.<name>".
func DecodeServer(file, name string, raw any) (Server, error) {
	if err := upstream.ValidName(name); err != nil {
		return Server{}, &Error{File: file, Key: "mcpServers." + name, Msg: err.Error()}
	}
	if err := check(file, "mcpServers", map[string]any{name: raw}); err != nil {
		return Server{}, err
	}
	var e serverEntry
	if err := unmarshal(raw, &e); err != nil {
		return Server{}, &Error{File: file, Key: "mcpServers." + name, Msg: err.Error()}
	}
	return e.server(file, name)
}

// defaults returns the documented defaults of scalar keys as a raw map.
// Defaults of lists and of the entries of mcpServers only document what an
// absent key means, and computed ones ("<user data dir>/…") are filled in
// where they are used.
func defaults() map[string]any {
	k := koanf.New(".")
	for _, key := range Keys() {
		if key.Default == "" || key.Kind >= KindStrings || strings.HasPrefix(key.Default, "<") || strings.Contains(key.Path, "*") {
			continue
		}
		_ = k.Set(key.Path, key.Default) // cannot fail: every path is new
	}
	return k.Raw()
}

// unmarshal decodes a checked raw value into out (a pointer to a struct
// with koanf tags) with koanf's decoder, mapstructure.
func unmarshal(raw any, out any) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook: decodeHook,
		TagName:    "koanf",
		Result:     out,
	})
	if err != nil {
		return err
	}
	return d.Decode(raw)
}

// decodeHook converts a raw value to the type of the field it goes to, as
// coerce does; fields of other types (sections) get it as it is.
func decodeHook(from, to reflect.Value) (any, error) {
	kind, ok := kindOf(to.Type())
	if !ok || kind == KindSection || to.Kind() == reflect.Pointer {
		return from.Interface(), nil // a pointer's element gets the hook
	}
	v, err := coerce(kind, nil, from.Interface())
	if err != nil {
		return nil, err
	}
	if rv := reflect.ValueOf(v); rv.Type() != to.Type() && rv.CanConvert(to.Type()) {
		return rv.Convert(to.Type()).Interface(), nil // e.g. string to Source
	}
	return v, nil
}

// check walks m, the value of key prefix, in key order, and returns the
// first key that is unknown, or whose value does not fit.
func check(file, prefix string, m map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		path := joinKey(prefix, k)
		key, ok := lookupKey(path)
		if !ok {
			msg := "unknown key"
			if s := suggest(path); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return &Error{File: file, Key: path, Msg: msg}
		}
		if key.Kind != KindSection {
			if _, err := coerce(key.Kind, key.Enum, v); err != nil {
				return &Error{File: file, Key: path, Msg: err.Error()}
			}
			continue
		}
		sub, ok := v.(map[string]any)
		if !ok {
			if v == nil {
				continue
			}
			return &Error{File: file, Key: path, Msg: fmt.Sprintf("expected a section (a map of keys), got %s", describe(v))}
		}
		if key.Path == "mcpServers.*" {
			if err := upstream.ValidName(k); err != nil {
				return &Error{File: file, Key: path, Msg: err.Error()}
			}
		}
		if err := check(file, path, sub); err != nil {
			return err
		}
	}
	return nil
}

// describe names a raw value for an error message.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	case nil:
		return "nothing"
	default:
		return fmt.Sprintf("%v", v)
	}
}

// coerce converts a raw value to kind. Strings are accepted for every
// scalar kind (environment variables are strings), numbers and booleans
// for strings. enum, when set, lists the strings allowed.
func coerce(kind Kind, enum []string, v any) (any, error) {
	bad := func() error { return fmt.Errorf("expected %s, got %s", kind, describe(v)) }
	var out any
	switch kind {
	case KindString:
		switch v := v.(type) {
		case string:
			out = v
		case int, int64, float64, bool:
			out = fmt.Sprint(v)
		default:
			return nil, bad()
		}
	case KindDuration:
		switch v := v.(type) {
		case string:
			d, err := time.ParseDuration(v)
			if err != nil {
				return nil, bad()
			}
			out = d
		case time.Duration: // from a flag
			out = v
		case int, int64, float64:
			return nil, fmt.Errorf("expected %s, got the number %v (write \"%vs\" for seconds)", kind, v, v)
		default:
			return nil, bad()
		}
		if out.(time.Duration) < 0 {
			return nil, errors.New("must not be negative")
		}
	case KindInt:
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
	case KindFloat:
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
	case KindBool:
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
	case KindStrings:
		list, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		ss := make([]string, 0, len(list))
		for i, e := range list {
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
	case KindStringMap:
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
	if s, ok := out.(string); ok && len(enum) > 0 && !slices.Contains(enum, s) {
		return nil, fmt.Errorf("expected one of %s, got %q", strings.Join(enum, ", "), s)
	}
	return out, nil
}

// server builds the upstream an entry of mcpServers declares.
func (e serverEntry) server(file, name string) (Server, error) {
	p := "mcpServers." + name + "."
	s := upstream.Spec{
		Name: name, Command: e.Command, Args: e.Args, Env: e.Env, Cwd: e.Cwd, URL: e.URL, Headers: e.Headers, OAuth: e.OAuth.spec(),
		Description: e.Description, Tools: upstream.ToolFilter{Allow: e.Tools.Allow, Deny: e.Tools.Deny},
		InitTimeout: upstream.Duration(e.InitTimeout), ListTimeout: upstream.Duration(e.ListTimeout),
		CallTimeout: upstream.Duration(e.CallTimeout), IdleTimeout: upstream.Duration(e.IdleTimeout),
		ProtocolVersion: e.ProtocolVersion, MaxInFlight: e.MaxInFlight,
		Scope: upstream.Scope(e.Scope), MaxInstances: e.MaxInstances,
		AllowSampling: e.AllowSampling, AllowElicitation: e.AllowElicitation, AllowRoots: e.AllowRoots, Roots: e.Roots,
		Trust: upstream.Trust(e.Trust),
	}
	switch {
	case e.Type != "" && e.Transport != "" && normalizeTransport(e.Type) != e.Transport:
		return Server{}, &Error{File: file, Key: p + "transport", Msg: fmt.Sprintf("disagrees with type %q", e.Type)}
	case e.Transport != "":
		s.Transport = upstream.Transport(e.Transport)
	case e.Type != "":
		s.Transport = upstream.Transport(normalizeTransport(e.Type))
	}
	switch e.Start {
	case "lazy":
		s.Start = upstream.StartLazy
	case "eager":
		s.Start = upstream.StartEagerSessions
	}
	sc := Server{Spec: s, Disabled: e.Disabled}
	if err := sc.Spec.Validate(); err != nil {
		var fe *upstream.FieldError
		if errors.As(err, &fe) {
			return Server{}, &Error{File: file, Key: p + fe.Field, Msg: fe.Msg}
		}
		return Server{}, &Error{File: file, Key: strings.TrimSuffix(p, "."), Msg: err.Error()}
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

// checkStore checks the store key as written: empty or sqlite (hub.db in
// the data directory), a postgres:// URL, or a reference resolved when the
// store is opened. The message never repeats the value (a URL may hold a
// password).
func checkStore(s Source) error {
	v := strings.ToLower(string(s))
	switch {
	case v == "", v == "sqlite", strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"),
		strings.HasPrefix(v, "file:"), strings.Contains(v, "${"):
		return nil
	}
	return errors.New(`want a postgres://user:password@host:port/database URL, "${VAR}" or "file:<path>" naming one, or nothing (hub.db in dataDir)`)
}

// checkAuth checks the auth section: an issuer needs an audience (and the
// other way round), its URLs must be https (http on loopback), and it
// excludes the static token and no-auth.
func checkAuth(file string, c *Config) error {
	bad := func(key, format string, a ...any) error {
		return &Error{File: file, Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case c.AuthIssuer == "" && (c.AuthAudience != "" || c.AuthJWKSURL != "" || len(c.AuthRequiredScopes) > 0):
		return bad("auth.issuer", "required with the other auth keys: the identity provider whose tokens the hub takes")
	case c.AuthIssuer == "":
		return nil
	case c.AuthAudience == "":
		return bad("auth.audience", "required with auth.issuer: the hub's resource URL tokens are issued for, e.g. https://hub.example.com/mcp")
	case c.HTTPToken != "":
		return bad("auth.issuer", "excludes http.token: with an identity provider the hub takes its tokens only")
	case c.HTTPNoAuth:
		return bad("auth.issuer", "excludes http.noAuth")
	}
	for key, v := range map[string]string{"auth.issuer": c.AuthIssuer, "auth.jwksUrl": c.AuthJWKSURL} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname()))) {
			return bad(key, "%q must be an https URL (http only on a loopback address)", v)
		}
	}
	return nil
}

func loopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || (ip != nil && ip.IsLoopback())
}
