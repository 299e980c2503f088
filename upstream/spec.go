package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Transport names how the hub reaches an upstream server.
type Transport string

// The transports an upstream can use.
const (
	TransportStdio Transport = "stdio" // a child process speaking newline-delimited JSON-RPC
	TransportSSE   Transport = "sse"   // the legacy HTTP+SSE transport (2024-11-05)
	TransportHTTP  Transport = "http"  // streamable HTTP (2025-03-26 and later)
)

// StartMode says when the hub starts an upstream.
type StartMode string

// The start modes.
const (
	StartEager StartMode = ""     // connect as soon as the upstream is registered (the default)
	StartLazy  StartMode = "lazy" // connect on the first call that needs it
	// StartEagerSessions is StartEager, and for an upstream with a
	// per-session scope it also starts each client session's instance when
	// the session starts, rather than on the session's first use of it.
	StartEagerSessions StartMode = "eager"
)

// Scope says which client sessions one running instance of an upstream (a
// process, or an HTTP session with the server) serves.
type Scope string

// The scopes.
const (
	// ScopeShared: one instance serves every client session (the default:
	// the empty value, which every registration stored before scopes meant).
	ScopeShared Scope = ""
	// ScopeSession: each client session gets an instance of its own,
	// started on its first use of the upstream and stopped when the session
	// ends. Requests the server makes of the client (sampling, elicitation,
	// roots) always reach that session, and state the server keeps (a
	// browser, a shell, a transaction) is the session's alone.
	ScopeSession Scope = "session"
	// ScopeAuto: shared until the server sends a request of the client
	// that the hub cannot attribute to one session, because several wait
	// on it; client sessions that start after that get instances of their
	// own.
	ScopeAuto Scope = "auto"
)

// ParseScope reads a scope as written in a config file, an admin call or
// a command line: "shared" (or ""), "session" or "auto".
func ParseScope(s string) (Scope, error) {
	switch s {
	case "", "shared":
		return ScopeShared, nil
	case string(ScopeSession), string(ScopeAuto):
		return Scope(s), nil
	}
	return "", fmt.Errorf("scope %q: must be shared, session or auto", s)
}

// String returns the scope's name ("shared" for the empty value).
func (s Scope) String() string {
	if s == ScopeShared {
		return "shared"
	}
	return string(s)
}

// Describe says, for a person approving a spec, how many instances the
// scope runs. Shared is described too: the scope is part of what an
// approval covers, and a change that makes a per-session server shared
// (its sessions then see each other's state) must read differently from
// the approval before.
func (s Scope) Describe() string {
	switch s {
	case ScopeSession:
		return "one per client session (scope session), started on the session's first use and stopped when it ends"
	case ScopeAuto:
		return "one shared by every client session, or one per client session for sessions that start after it asks a client something while several sessions wait on it (scope auto)"
	}
	return "one shared by every client session (scope shared)"
}

// DefaultScope is the scope of a registration made at run time (a client's
// hub_add_server, POST /api/servers, mcp-hub add and import) that does not
// name one. A config-file entry without a scope, and every registration
// stored before scopes existed, are shared: that is what their authors and
// approvers saw.
const DefaultScope = ScopeAuto

// NamePattern is the pattern every upstream name must match.
const NamePattern = `^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`

var nameRE = regexp.MustCompile(NamePattern)

// Spec is everything the hub needs to connect to one upstream server. It is
// the unit that is stored, compared and approved.
//
// Env and Headers values may be plain strings, "${VAR}" (taken from the hub's
// environment when the upstream starts) or "file:<path>" (read when the
// upstream starts); see [ResolveValue].
//
// Every field decides what runs on this machine or what leaves it, and so is
// covered by the approval fingerprint ([Spec.Fingerprint]), unless its tag
// says approval:"exempt" (names, descriptions, timeouts and other tuning
// that changes neither). A field added later is covered unless it is
// exempted here on purpose; give it omitempty (or omitzero) so that specs
// that do not use it keep their fingerprint.
type Spec struct {
	Name        string    `json:"name" approval:"exempt"`
	Description string    `json:"description,omitempty" approval:"exempt"`
	Transport   Transport `json:"transport"`

	// stdio
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`

	// sse and http
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth tunes the OAuth client of an sse or http upstream; see [OAuth].
	OAuth *OAuth `json:"oauth,omitempty"`

	// Tools filters the upstream's tools before they reach the catalog.
	Tools ToolFilter `json:"tools,omitzero" approval:"exempt"`

	// Timeouts; zero means the hub's default.
	InitTimeout Duration `json:"initTimeout,omitzero" approval:"exempt"`
	ListTimeout Duration `json:"listTimeout,omitzero" approval:"exempt"`
	CallTimeout Duration `json:"callTimeout,omitzero" approval:"exempt"`

	// ProtocolVersion pins the protocol version the hub asks for. Empty means
	// the hub's default (2025-11-25).
	ProtocolVersion string `json:"protocolVersion,omitempty" approval:"exempt"`

	// Start selects eager (default) or lazy start.
	Start StartMode `json:"start,omitempty" approval:"exempt"`
	// IdleTimeout stops a stdio upstream that was not used for this long.
	// Zero means never.
	IdleTimeout Duration `json:"idleTimeout,omitzero" approval:"exempt"`
	// MaxInFlight caps concurrent requests to this upstream; zero means the
	// hub's default.
	MaxInFlight int `json:"maxInFlight,omitempty" approval:"exempt"`

	// Scope says whether one instance serves every client session (shared,
	// the empty value) or each session gets its own (session, or auto once
	// the server made a request the hub could not attribute). It decides how
	// many processes run, so an approval covers it.
	Scope Scope `json:"scope,omitempty"`
	// MaxInstances caps the per-session instances of this upstream running
	// at once; zero means the hub's default (16).
	MaxInstances int `json:"maxInstances,omitempty" approval:"exempt"`

	// Server→client requests the upstream may make of the calling client.
	// Nil means the hub's default (allowed when the request can be attributed
	// to one client session).
	AllowSampling    *bool `json:"allowSampling,omitempty"`
	AllowElicitation *bool `json:"allowElicitation,omitempty"`
	AllowRoots       *bool `json:"allowRoots,omitempty"`
	// Roots are the hub's answer when the upstream asks for roots
	// (roots/list) and no client session answers: when no session waits
	// on it (a shared upstream, which many servers ask once when they
	// start), or the session's client has no roots. Directories (absolute,
	// or ~/…) or file:// URIs; none means an empty list. A server such as
	// the filesystem server works in its roots instead of the directories
	// of its arguments, so an approval covers them; see roots.go.
	Roots []string `json:"roots,omitempty"`

	// Trust says what happens when a tool, prompt or resource template it
	// lists differs from the pinned one ([Registration.TrustPolicy]; empty:
	// the default for who registered it). Relaxing it is a change a person
	// approves: it is covered by the fingerprint.
	Trust Trust `json:"trust,omitempty"`
}

// ToolFilter selects tools by name with '*' globs. A tool is kept when Allow
// is empty or one of its patterns matches, and no Deny pattern matches.
type ToolFilter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// IsZero reports whether the filter keeps every tool.
func (f ToolFilter) IsZero() bool { return len(f.Allow) == 0 && len(f.Deny) == 0 }

// Duration is a time.Duration that encodes as a string such as "30s".
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON implements json.Unmarshaler. It accepts a Go duration string
// or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("invalid duration %s: want a string such as \"30s\"", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// ValidName reports whether name is a valid upstream name: it matches
// [NamePattern] and is not reserved for the hub ("hub" or "hub_…").
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		// Bounded: the name can be anything (a megabyte) from anywhere.
		return errors.New(redact.Bound(fmt.Sprintf("invalid name %q: %s; %s", name, nameFault(name), nameRule)))
	}
	if strings.EqualFold(name, "hub") || strings.HasPrefix(strings.ToLower(name), "hub_") {
		return fmt.Errorf("invalid name %q: \"hub\" and names starting \"hub_\" are reserved for the hub (its own tools are hub_*)", name)
	}
	return nil
}

// nameRule is NamePattern in words.
const nameRule = "a name is made of letters, digits, '-' and '_' (at most 32, the first a letter or a digit)"

// maxNameFaults bounds the characters nameFault names (and its work: each
// is compared with those named before).
const maxNameFaults = 5

// nameFault says in words how name breaks NamePattern.
func nameFault(name string) string {
	if name == "" {
		return "it is empty"
	}
	var bad []string
	for _, r := range name {
		if r < 0x80 && (r == '-' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			continue
		}
		var w string
		switch r {
		case ' ':
			w = "a space"
		case '\t':
			w = "a tab"
		default:
			w = fmt.Sprintf("%q", r)
		}
		if !slices.Contains(bad, w) {
			if len(bad) == maxNameFaults {
				bad = append(bad, "…") // a name of a megabyte of other characters: a few say enough
				break
			}
			bad = append(bad, w)
		}
	}
	switch {
	case len(bad) > 0:
		return "it has " + strings.Join(bad, ", ")
	case name[0] == '-' || name[0] == '_':
		return fmt.Sprintf("it starts with %q", name[0])
	}
	return fmt.Sprintf("it has %d characters", utf8.RuneCountInString(name))
}

// FieldError is a validation error that names the offending field.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: redact.Bound(fmt.Sprintf(format, args...))} // it may quote any input
}

// InferTransport returns the transport implied by the spec's fields when
// Transport is empty: a command means stdio, a URL whose path ends in "/sse"
// means legacy SSE, any other URL means streamable HTTP.
func (s *Spec) InferTransport() Transport {
	if s.Transport != "" {
		return s.Transport
	}
	if s.Command != "" {
		return TransportStdio
	}
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/sse") {
			return TransportSSE
		}
		return TransportHTTP
	}
	return ""
}

// Validate checks the spec and fills in the transport when it can be
// inferred. Errors are [*FieldError]s naming the field.
func (s *Spec) Validate() error {
	if err := ValidName(s.Name); err != nil {
		return &FieldError{Field: "name", Msg: err.Error()}
	}
	if err := noNUL(reflect.ValueOf(s).Elem(), ""); err != nil {
		return err
	}
	s.Transport = s.InferTransport()
	switch s.Transport {
	case TransportStdio:
		if s.Command == "" {
			return fieldErr("command", "required for the stdio transport")
		}
		if s.URL != "" {
			return fieldErr("url", "not allowed with the stdio transport")
		}
		if len(s.Headers) > 0 {
			return fieldErr("headers", "not allowed with the stdio transport")
		}
		if err := noControl("command", s.Command); err != nil {
			return err
		}
		for i, a := range s.Args {
			if err := noControl(fmt.Sprintf("args[%d]", i), a); err != nil {
				return err
			}
		}
		if err := noControl("cwd", s.Cwd); err != nil {
			return err
		}
		for k, v := range s.Env {
			if !envNameRE.MatchString(k) {
				return fieldErr("env", "invalid variable name %q", k)
			}
			if err := noControl("env."+k, v); err != nil {
				return err
			}
		}
	case TransportSSE, TransportHTTP:
		if s.URL == "" {
			return fieldErr("url", "required for the %s transport", s.Transport)
		}
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fieldErr("url", "must be an absolute http or https URL")
		}
		if u.User != nil {
			return fieldErr("url", "must not contain credentials; use headers")
		}
		if s.Command != "" {
			return fieldErr("command", "not allowed with the %s transport", s.Transport)
		}
		if len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
			return fieldErr("args", "args, env and cwd are only allowed with the stdio transport")
		}
		for k, v := range s.Headers {
			if k == "" || strings.ContainsAny(k, " \t\r\n:") {
				return fieldErr("headers", "invalid header name %q", k)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return fieldErr("headers."+k, "must not contain CR, LF or NUL")
			}
		}
	case "":
		return fieldErr("command", "either command (stdio) or url (sse, http) is required")
	default:
		return fieldErr("transport", "must be one of stdio, sse, http (got %q)", s.Transport)
	}
	if s.OAuth != nil {
		if err := s.OAuth.validate(s); err != nil {
			return err
		}
	}
	if s.Start != StartEager && s.Start != StartLazy && s.Start != StartEagerSessions {
		return fieldErr("start", "must be \"lazy\", \"eager\" or empty (got %q)", s.Start)
	}
	switch s.Trust {
	case "", TrustPin, TrustWarn, TrustOff:
	default:
		return fieldErr("trust", "must be pin, warn or off (got %q)", s.Trust)
	}
	if s.MaxInFlight < 0 {
		return fieldErr("maxInFlight", "must not be negative")
	}
	scope, err := ParseScope(string(s.Scope))
	if err != nil {
		return fieldErr("scope", "must be shared, session or auto (got %q)", s.Scope)
	}
	s.Scope = scope // "shared" is stored as the empty value: one fingerprint for one meaning
	if s.MaxInstances < 0 {
		return fieldErr("maxInstances", "must not be negative")
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"initTimeout", s.InitTimeout}, {"listTimeout", s.ListTimeout}, {"callTimeout", s.CallTimeout}, {"idleTimeout", s.IdleTimeout}} {
		if d.v < 0 {
			return fieldErr(d.name, "must not be negative")
		}
	}
	for i, p := range slices.Concat(s.Tools.Allow, s.Tools.Deny) {
		if p == "" {
			return fieldErr("tools", "empty pattern at position %d", i)
		}
	}
	for i, r := range s.Roots {
		if err := validRoot(r); err != nil {
			return fieldErr(fmt.Sprintf("roots[%d]", i), "%v", err)
		}
	}
	return nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func noControl(field, v string) error {
	if strings.ContainsAny(v, "\x00\r\n") {
		return fieldErr(field, "must not contain NUL, CR or LF")
	}
	return nil
}

// LaunchSpec is the one-line summary of what an upstream runs, safe for
// lists and the audit log: for stdio the command, its arguments, the names
// of its environment variables and its working directory; for HTTP the URL
// and the names of its headers. Values of env vars and headers are not part
// of it (they are often secrets), their names are. What a person approves
// is more ([Spec.Fingerprint]) and is shown by [Spec.Review].
type LaunchSpec struct {
	Transport   Transport `json:"transport"`
	Command     string    `json:"command,omitempty"`
	Args        []string  `json:"args,omitempty"`
	EnvNames    []string  `json:"envNames,omitempty"`
	Cwd         string    `json:"cwd,omitempty"`
	URL         string    `json:"url,omitempty"`
	HeaderNames []string  `json:"headerNames,omitempty"`
}

// Launch returns the spec's launch spec.
func (s *Spec) Launch() LaunchSpec {
	l := LaunchSpec{Transport: s.InferTransport()}
	if l.Transport == TransportStdio {
		l.Command, l.Args, l.Cwd = s.Command, slices.Clone(s.Args), s.Cwd
		l.EnvNames = sortedKeys(s.Env)
	} else {
		l.URL = s.URL
		l.HeaderNames = sortedKeys(s.Headers)
	}
	return l
}

// LegacyHash returns the hex SHA-256 of the launch spec's canonical JSON
// encoding: the approval fingerprint before approvals covered env and header
// values. It is kept only to re-check approvals stored then
// ([RecheckLegacyApproval]); approvals use [Spec.Fingerprint].
func (l LaunchSpec) LegacyHash() string {
	b, err := json.Marshal(l)
	if err != nil { // cannot happen: only strings and slices of strings
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// String renders the launch spec for a person to approve: the exact argv,
// quoted where needed, never truncated.
func (l LaunchSpec) String() string {
	var b strings.Builder
	if l.Transport == TransportStdio {
		b.WriteString("run: ")
		b.WriteString(formatArgv(l.Command, l.Args))
		if l.Cwd != "" {
			b.WriteString("\nin directory: ")
			b.WriteString(l.Cwd)
		}
		if len(l.EnvNames) > 0 {
			b.WriteString("\nwith environment variables: ")
			b.WriteString(strings.Join(l.EnvNames, ", "))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "connect (%s) to: %s", l.Transport, l.URL)
	if len(l.HeaderNames) > 0 {
		b.WriteString("\nwith headers: ")
		b.WriteString(strings.Join(l.HeaderNames, ", "))
	}
	return b.String()
}

func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\"'\\$`;&|<>(){}[]*?!#~") {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Redacted returns a copy of the spec with its secret values masked by
// redact's rules: env and header values (references such as ${VAR} and
// file:PATH are kept), URL userinfo and parameter values, and the values
// of secret-looking arguments. It is what the hub shows anywhere but in
// an approval prompt: tool results, the REST API, the command line, logs.
func (s Spec) Redacted() Spec {
	r := s
	if len(s.Args) > 0 {
		r.Args = redact.Argv(append([]string{s.Command}, s.Args...))[1:]
	}
	r.Env = redact.Values(s.Env)
	r.Headers = redact.Values(s.Headers)
	r.URL = redact.URL(s.URL)
	if s.OAuth != nil {
		o := *s.OAuth
		var m redact.Masker
		o.ClientSecret = m.Value(o.ClientSecret)
		r.OAuth = &o
	}
	return r
}

// RedactedLaunch is the launch spec of [Spec.Redacted]: what outputs other
// than an approval prompt show of what an upstream runs.
func (s Spec) RedactedLaunch() LaunchSpec {
	r := s.Redacted()
	return r.Launch()
}

// secretValues are the exact values the hub passes to the upstream that
// redact's rules call secret: the resolved env or header values, the
// values of secret-looking arguments, the URL's userinfo and parameter
// values. What the upstream writes back is scrubbed of them.
func (s *Spec) secretValues(resolved map[string]string) []string {
	var argv []string
	if s.Command != "" {
		argv = append([]string{s.Command}, s.Args...)
	}
	out := redact.Secrets(argv, s.URL)
	for _, v := range resolved {
		out = append(out, v)
	}
	return out
}

// LaunchWarnings returns what deserves a careful look before approving this
// spec (SEP-1024): shells, elevated privileges, interpreters told to run
// code from their arguments, environment variables that change what code
// loads; for sse and http, a host on this machine, a private network or a
// cloud metadata address, plain http, and headers that send the hub's
// variables or files' contents.
func (spec *Spec) LaunchWarnings() []string {
	var ws []string
	if spec.InferTransport() != TransportStdio {
		return urlWarnings(spec)
	}
	base := spec.Command[strings.LastIndexAny(spec.Command, `/\`)+1:]
	switch base {
	case "sh", "bash", "zsh", "dash", "fish", "cmd", "cmd.exe", "powershell", "pwsh":
		ws = append(ws, "it runs a shell: anything in its arguments runs as a command")
	case "sudo", "doas", "su":
		ws = append(ws, "it runs with elevated privileges")
	}
	for _, a := range spec.Args {
		switch a {
		case "-c", "-e", "--eval", "-p", "--print", "--from":
			ws = append(ws, fmt.Sprintf("argument %q makes %s run code given on its command line", a, base))
		}
		if strings.Contains(a, "rm -rf") || strings.Contains(a, "curl ") || strings.Contains(a, "| sh") {
			ws = append(ws, fmt.Sprintf("argument %q looks like a shell command", a))
		}
	}
	for _, k := range sortedKeys(spec.Env) {
		if codeLoading(k) {
			ws = append(ws, fmt.Sprintf("environment variable %s changes what code the program loads", k))
		}
	}
	return ws
}
