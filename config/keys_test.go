package config

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestKeysFromTags: the keys derived from the struct tags are the keys the
// hub documented before they were (the schema table of cmd/mcp-hub), with
// the same kinds, defaults and allowed values, in the same order.
func TestKeysFromTags(t *testing.T) {
	type key struct {
		Path    string
		Kind    Kind
		Default string
		Enum    []string
	}
	want := []key{
		{"logLevel", KindString, "info", []string{"debug", "info", "warn", "error"}},
		{"logFormat", KindString, "text", []string{"text", "json"}},
		{"dataDir", KindString, "<user data dir>/mcp-hub", nil},
		{"store", KindString, "", nil},
		{"catalog", KindSection, "", nil},
		{"catalog.policy", KindString, "merge", []string{"merge", "prefix"}},
		{"catalog.separator", KindString, "__", nil},
		{"catalog.expose", KindString, "all", []string{"all", "search", "auto"}},
		{"catalog.alwaysExpose", KindStrings, "", nil},
		{"catalog.sessionTools", KindInt, "20", nil},
		{"catalog.searchAbove", KindInt, "60", nil},
		{"firstListWait", KindDuration, "10s", nil},
		{"configPoll", KindDuration, "1s", nil},
		{"protocolVersion", KindString, upstream.DefaultProtocolVersion, nil},
		{"timeouts", KindSection, "", nil},
		{"timeouts.initialize", KindDuration, "30s", nil},
		{"timeouts.list", KindDuration, "15s", nil},
		{"timeouts.call", KindDuration, "120s", nil},
		{"timeouts.shutdownGrace", KindDuration, "2s", nil},
		{"limits", KindSection, "", nil},
		{"limits.maxInFlight", KindInt, "10", nil},
		{"limits.maxMessageBytes", KindInt, "16777216", nil},
		{"limits.maxConcurrentSpawns", KindInt, "4", nil},
		{"limits.maxInstances", KindInt, "16", nil},
		{"limits.maxTotalInstances", KindInt, "64", nil},
		{"reconnect", KindSection, "", nil},
		{"reconnect.initialDelay", KindDuration, "5s", nil},
		{"reconnect.multiplier", KindFloat, "2", nil},
		{"reconnect.maxDelay", KindDuration, "60s", nil},
		{"reconnect.jitter", KindFloat, "0.25", nil},
		{"reconnect.maxAttempts", KindInt, "5", nil},
		{"health", KindSection, "", nil},
		{"health.interval", KindDuration, "30s", nil},
		{"health.failures", KindInt, "3", nil},
		{"security", KindSection, "", nil},
		{"security.maxToolOutputLength", KindInt, "50000", nil},
		{"security.allowedServerNames", KindStrings, "", nil},
		{"admin", KindSection, "", nil},
		{"admin.tools", KindString, "on", []string{"on", "read-only", "off"}},
		{"admin.approval", KindString, "ask", []string{"ask", "auto"}},
		{"http", KindSection, "", nil},
		{"http.listen", KindString, "", nil},
		{"http.token", KindString, "", nil},
		{"http.noAuth", KindBool, "false", nil},
		{"http.allowRemote", KindBool, "false", nil},
		{"http.allowedHosts", KindStrings, "", nil},
		{"http.allowedOrigins", KindStrings, "", nil},
		{"http.maxSessions", KindInt, "64", nil},
		{"http.sessionIdleTimeout", KindDuration, "30m", nil},
		{"http.maxBodyBytes", KindInt, "16777216", nil},
		{"http.readHeaderTimeout", KindDuration, "5s", nil},
		{"http.bodyTimeout", KindDuration, "30s", nil},
		{"auth", KindSection, "", nil},
		{"auth.issuer", KindString, "", nil},
		{"auth.audience", KindString, "", nil},
		{"auth.jwksUrl", KindString, "", nil},
		{"auth.requiredScopes", KindStrings, "", nil},
		{"auth.adminScope", KindString, "mcp-hub:admin", nil},
		{"env", KindSection, "", nil},
		{"env.inherit", KindStrings, "[]", nil},
		{"telemetry", KindSection, "", nil},
		{"telemetry.endpoint", KindString, "", nil},
		{"telemetry.protocol", KindString, "http/protobuf", []string{"http/protobuf", "grpc"}},
		{"telemetry.headers", KindStringMap, "", nil},
		{"telemetry.serviceName", KindString, "mcp-hub", nil},
		{"telemetry.resourceAttributes", KindStringMap, "", nil},
		{"telemetry.sampler", KindString, "", []string{"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"}},
		{"telemetry.samplerArg", KindString, "", nil},
		{"codeMode", KindSection, "", nil},
		{"codeMode.mode", KindString, "off", []string{"off", "on"}},
		{"codeMode.timeout", KindDuration, "30s", nil},
		{"codeMode.memoryLimit", KindInt, "64", nil},
		{"codeMode.maxCalls", KindInt, "100", nil},
		{"codeMode.maxConcurrent", KindInt, "4", nil},
		{"toolPolicy", KindSection, "", nil},
		{"toolPolicy.default", KindString, "allow", []string{"allow", "ask", "deny"}},
		{"toolPolicy.rules", KindStringMap, "", nil},
		{"mcpServers", KindSection, "", nil},
		{"mcpServers.*", KindSection, "", nil},
		{"mcpServers.*.command", KindString, "", nil},
		{"mcpServers.*.args", KindStrings, "", nil},
		{"mcpServers.*.env", KindStringMap, "", nil},
		{"mcpServers.*.cwd", KindString, "", nil},
		{"mcpServers.*.url", KindString, "", nil},
		{"mcpServers.*.headers", KindStringMap, "", nil},
		{"mcpServers.*.oauth", KindSection, "", nil},
		{"mcpServers.*.oauth.clientId", KindString, "", nil},
		{"mcpServers.*.oauth.clientSecret", KindString, "", nil},
		{"mcpServers.*.oauth.scopes", KindStrings, "", nil},
		{"mcpServers.*.oauth.clientMetadataUrl", KindString, "", nil},
		{"mcpServers.*.oauth.redirectPort", KindInt, "", nil},
		{"mcpServers.*.type", KindString, "", []string{"stdio", "sse", "http", "streamable-http", "streamableHttp"}},
		{"mcpServers.*.transport", KindString, "", []string{"stdio", "sse", "http"}},
		{"mcpServers.*.description", KindString, "", nil},
		{"mcpServers.*.disabled", KindBool, "false", nil},
		{"mcpServers.*.tools", KindSection, "", nil},
		{"mcpServers.*.tools.allow", KindStrings, "", nil},
		{"mcpServers.*.tools.deny", KindStrings, "", nil},
		{"mcpServers.*.initTimeout", KindDuration, "", nil},
		{"mcpServers.*.listTimeout", KindDuration, "", nil},
		{"mcpServers.*.callTimeout", KindDuration, "", nil},
		{"mcpServers.*.protocolVersion", KindString, "", nil},
		{"mcpServers.*.start", KindString, "", []string{"eager", "lazy"}},
		{"mcpServers.*.idleTimeout", KindDuration, "", nil},
		{"mcpServers.*.maxInFlight", KindInt, "", nil},
		{"mcpServers.*.scope", KindString, "shared", []string{"shared", "session", "auto"}},
		{"mcpServers.*.maxInstances", KindInt, "", nil},
		{"mcpServers.*.allowSampling", KindBool, "true", nil},
		{"mcpServers.*.allowElicitation", KindBool, "true", nil},
		{"mcpServers.*.allowRoots", KindBool, "true", nil},
		{"mcpServers.*.roots", KindStrings, "", nil},
		{"mcpServers.*.trust", KindString, "warn", []string{"pin", "warn", "off"}},
	}
	var got []key
	for _, k := range Keys() {
		got = append(got, key{k.Path, k.Kind, k.Default, k.Enum})
		if k.Kind != KindSection && k.Doc == "" {
			t.Errorf("%s has no doc", k.Path)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Keys() (-want +got):\n%s", diff)
	}
}

// TestKeysReachTheStructs: every key a file sets lands in the field its
// tag names (a key with a tag but no effect would pass TestKeysFromTags).
func TestKeysReachTheStructs(t *testing.T) {
	c, err := Load(Sources{File: writeFile(t, "hub.yaml", `
logLevel: debug
logFormat: json
dataDir: /d
catalog: {policy: prefix, separator: "--", expose: search, alwaysExpose: [x*], sessionTools: 5, searchAbove: 7}
firstListWait: 1s
configPoll: 2s
protocolVersion: "2025-06-18"
timeouts: {initialize: 3s, list: 4s, call: 5s, shutdownGrace: 6s}
limits: {maxInFlight: 7, maxMessageBytes: 8, maxConcurrentSpawns: 9, maxInstances: 21, maxTotalInstances: 22}
reconnect: {initialDelay: 10s, multiplier: 1.5, maxDelay: 11s, jitter: 0.5, maxAttempts: 12}
health: {interval: 13s, failures: 14}
security: {maxToolOutputLength: 15, allowedServerNames: [a]}
admin: {tools: read-only, approval: auto}
http: {listen: "127.0.0.1:1", token: "${T}", noAuth: true, allowRemote: true, allowedHosts: [h], allowedOrigins: [o],
       maxSessions: 16, sessionIdleTimeout: 17s, maxBodyBytes: 18, readHeaderTimeout: 19s, bodyTimeout: 20s}
env: {inherit: [E]}
telemetry: {endpoint: "http://c:4318", protocol: grpc, headers: {k: "${K}"}, serviceName: s, resourceAttributes: {a: b},
            sampler: traceidratio, samplerArg: "0.5"}
codeMode: on
toolPolicy: {default: allow, rules: {}}
`)})
	if err != nil {
		t.Fatal(err)
	}
	s := func(d string) time.Duration { v, _ := time.ParseDuration(d); return v }
	want := &Config{
		File: c.File, LogLevel: "debug", LogFormat: "json", DataDir: "/d",
		CatalogSettings: CatalogSettings{"prefix", "--", "search", []string{"x*"}, 5, 7}, FirstListWait: s("1s"), ConfigPoll: s("2s"), ProtocolVersion: "2025-06-18",
		Timeouts: Timeouts{s("3s"), s("4s"), s("5s"), s("6s")}, Limits: Limits{7, 8, 9, 21, 22},
		Backoff: Reconnect{s("10s"), 1.5, s("11s"), 0.5, 12}, Health: Health{s("13s"), 14},
		Security: Security{15, []string{"a"}}, Admin: Admin{"read-only", "auto"},
		HTTP: HTTP{"127.0.0.1:1", "${T}", true, true, []string{"h"}, []string{"o"}, 16, s("17s"), 18, s("19s"), s("20s")},
		Auth: Auth{AuthAdminScope: "mcp-hub:admin"},
		Env:  Env{[]string{"E"}},
		Telemetry: Telemetry{"http://c:4318", "grpc", map[string]Source{"k": "${K}"}, "s", map[string]string{"a": "b"},
			"traceidratio", "0.5"},
		CodeMode:   CodeMode{"on", s("30s"), 64, 100, 4},
		ToolPolicy: ToolPolicy{"allow", map[string]string{}},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// TestDefaultProtocolVersion: the documented default is the one the
// upstream package asks for.
func TestDefaultProtocolVersion(t *testing.T) {
	for _, k := range Keys() {
		if k.Path == "protocolVersion" && k.Default != upstream.DefaultProtocolVersion {
			t.Errorf("protocolVersion defaults to %q, upstream to %q", k.Default, upstream.DefaultProtocolVersion)
		}
	}
}

// TestREADMEConfig: the README's flag table and its example error are what
// the code does.
func TestREADMEConfig(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	flags := map[string]string{} // flag → key, from the table
	for _, m := range regexp.MustCompile("(?m)^\\| `--([a-z-]+)[^`]*` \\| `(MCP_HUB_[A-Z_]+)` \\| `([A-Za-z.]+)` \\|$").FindAllStringSubmatch(readme, -1) {
		flags[m[1]] = m[3]
		if got := envKey(m[2]); got != m[3] {
			t.Errorf("README: %s sets %s, not %s", m[2], got, m[3])
		}
	}
	for flag, key := range flagKeys() {
		if strings.HasPrefix(flag, "http") {
			continue // the serve command's flags; the README documents them with serve
		}
		if flags[flag] != key {
			t.Errorf("README's flag table: --%s sets %q, want %q", flag, flags[flag], key)
		}
		delete(flags, flag)
	}
	if len(flags) > 0 {
		t.Errorf("README's flag table lists flags that set no key: %v", flags)
	}

	ex := regexp.MustCompile(`(?m)^    mcp-hub: config (\S+): (mcpServers\.(\w+)\.(\w+)): (.*)$`).FindStringSubmatch(readme)
	if ex == nil {
		t.Fatal("README has no example config error")
	}
	file := writeFile(t, "hub.yaml", "mcpServers:\n  "+ex[3]+":\n    "+ex[4]+": x\n")
	_, err = Load(Sources{File: file})
	if want := "config " + file + ": " + ex[2] + ": " + ex[5]; err == nil || err.Error() != want {
		t.Errorf("the README's example: got %v, want %s", err, want)
	}
}

// TestUnknownKeyMessages: unknown keys are refused with the key, and the
// key meant when it is close to one.
func TestUnknownKeyMessages(t *testing.T) {
	for _, tt := range []struct{ content, want string }{
		{"mcpServers:\n  up:\n    command: x\n    bearer: {}\n", "mcpServers.up.bearer: unknown key"},
		{"mcpServers:\n  up:\n    comand: x\n", `mcpServers.up.comand: unknown key (did you mean "mcpServers.up.command"?)`},
		{"timeout:\n  call: 5s\n", `timeout: unknown key (did you mean "timeouts"?)`},
		{"http:\n  listn: x\n", `http.listn: unknown key (did you mean "http.listen"?)`},
		{"frobnicate: 1\n", "frobnicate: unknown key"},
	} {
		file := writeFile(t, "hub.yaml", tt.content)
		_, err := Load(Sources{File: file})
		if want := "config " + file + ": " + tt.want; err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", tt.content, err, want)
		}
	}
}

func TestKeysAreUnique(t *testing.T) {
	var paths []string
	for _, k := range Keys() {
		paths = append(paths, k.Path)
	}
	slices.Sort(paths)
	if c := slices.Compact(slices.Clone(paths)); len(c) != len(paths) {
		t.Errorf("duplicate keys in %v", paths)
	}
}

// TestAuthSection: the auth keys land in their fields, and a section that
// cannot work is refused naming the key.
func TestAuthSection(t *testing.T) {
	c, err := Load(Sources{File: writeFile(t, "hub.yaml", `
auth: {issuer: "https://idp.example/realm", audience: "https://hub.example/mcp", jwksUrl: "http://127.0.0.1:9/jwks",
       requiredScopes: [mcp, tools], adminScope: ops}
`)})
	if err != nil {
		t.Fatal(err)
	}
	want := Auth{"https://idp.example/realm", "https://hub.example/mcp", "http://127.0.0.1:9/jwks", []string{"mcp", "tools"}, "ops"}
	if diff := cmp.Diff(want, c.Auth); diff != "" || !c.AuthEnabled() {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ file, key, msg string }{
		{`auth: {audience: "https://hub.example/mcp"}`, "auth.issuer", "required with the other auth keys"},
		{`auth: {issuer: "https://idp.example"}`, "auth.audience", "required with auth.issuer"},
		{`auth: {issuer: "http://idp.example", audience: a}`, "auth.issuer", "https"},
		{`auth: {issuer: "https://idp.example", audience: a, jwksUrl: "http://keys.example/jwks"}`, "auth.jwksUrl", "https"},
		{"auth: {issuer: \"https://idp.example\", audience: a}\nhttp: {token: \"${T}\"}", "auth.issuer", "excludes http.token"},
		{"auth: {issuer: \"https://idp.example\", audience: a}\nhttp: {noAuth: true}", "auth.issuer", "excludes http.noAuth"},
	} {
		_, err := Load(Sources{File: writeFile(t, "hub.yaml", tt.file)})
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tt.key || !strings.Contains(ce.Msg, tt.msg) {
			t.Errorf("%s: %v, want %s: …%s…", tt.file, err, tt.key, tt.msg)
		}
	}
}
