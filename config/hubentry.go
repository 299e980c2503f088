package config

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/clientconfig"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// A config file may hold an entry that launches mcp-hub itself: a client's
// file after mcp-hub setup holds the hub's own entry, and a hub may serve
// another hub's servers through it. The hub it launches takes its
// configuration from a config file and a store of its own (its --config
// and --data-dir or --store, its environment, its file). One that would
// take this hub's own is not run: with this config file it would start
// another copy of itself, without end; with this store it would run this
// hub's servers a second time (and, if its file holds this hub, start this
// hub again). Any other runs, a hub under this hub.

// HubEntry is an entry of mcpServers that launches mcp-hub itself.
type HubEntry struct {
	Name string
	// Command and Args are what it runs.
	Command string
	Args    []string
	// Config and Store say, for people, where the hub it launches would
	// take its configuration from: its config file and its store.
	Config, Store string
	// NotRun says why it is not run, starting "it launches mcp-hub
	// itself"; "" when it runs, as a hub under this hub (it is then among
	// the Servers).
	NotRun string
}

// home is where a hub takes its configuration from: its config file (the
// default one when none is named), and its store: a store key ("" for
// hub.db in the data directory) and the data directory ("" for the
// default one).
type home struct {
	file, store, dataDir string
}

// storeWords describes the store for people; never a store URL, which may
// hold a password.
func (h home) storeWords() string {
	switch {
	case h.store != "" && h.store != "sqlite":
		return "the store " + redactedStore(h.store)
	case h.dataDir == "":
		return "hub.db in the default data directory"
	}
	return filepath.Join(h.dataDir, "hub.db")
}

// redactedStore names a store key without a secret it may hold: the scheme
// of a URL, or the reference as written.
func redactedStore(s string) string {
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		return scheme + "://… (shared by several hubs)"
	}
	return s
}

// sameStore reports whether two homes have one store.
func (h home) sameStore(o home) bool {
	norm := func(s string) string {
		if s == "sqlite" {
			return ""
		}
		return s
	}
	if norm(h.store) != norm(o.store) {
		return false
	}
	return norm(h.store) != "" || h.dataDir == o.dataDir
}

// notRun says why a hub of home h must not run under a hub of home this,
// "" when it may.
func (h home) notRun(this home) string {
	switch {
	case h.file != "" && h.file == this.file:
		return "it launches mcp-hub itself, with this config file (" + h.file + "): that hub would start another, without end"
	case h.sameStore(this):
		return "it launches mcp-hub itself, on this hub's store (" + this.storeWords() + "): it would run this hub's servers a second time"
	}
	return ""
}

// absPath makes p absolute, relative to dir when it is not "" (else to the
// working directory), with symbolic links resolved when it exists.
func absPath(p, dir string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// hubHome returns where the hub a stdio entry launches takes its
// configuration from, and whether the entry launches mcp-hub at all.
func hubHome(command string, args []string, env map[string]string, cwd string) (home, bool) {
	hubArgs, ok := clientconfig.LaunchesHub(command, args)
	if !ok {
		return home{}, false
	}
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.SetOutput(devNull{})
	fs.ParseErrorsAllowlist.UnknownFlags = true
	AddFlags(fs)
	for _, b := range []string{"version", "stdio", "http-no-auth", "http-allow-remote"} {
		fs.Bool(b, false, "") // serve's flags that take no value
	}
	_ = fs.Parse(hubArgs)
	pick := func(flag, envVar, inFile string) string {
		if f := fs.Lookup(flag); f != nil && f.Changed {
			return f.Value.String()
		}
		if v := env[envVar]; v != "" {
			return v
		}
		return inFile
	}
	h := home{file: absPath(pick("config", "MCP_HUB_CONFIG", DefaultFile()), cwd)}
	var fileDataDir, fileStore string
	if m := fileSettings(h.file); m != nil {
		fileDataDir, _ = m["dataDir"].(string)
		fileStore, _ = m["store"].(string)
	}
	h.dataDir = absPath(pick("data-dir", "MCP_HUB_DATA_DIR", fileDataDir), cwd)
	h.store = pick("store", "MCP_HUB_STORE", fileStore)
	return h, true
}

// fileSettings returns the top-level settings of a config file, nil when
// it cannot be read. Only dataDir and store are looked at: the file is not
// decoded, so a hub entry in it is not followed.
func fileSettings(path string) map[string]any {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]any
	if strings.EqualFold(filepath.Ext(path), ".json") {
		m, err = jsonParser{}.Unmarshal(b)
	} else {
		m, err = yamlParser{}.Unmarshal(b)
	}
	if err != nil {
		return nil
	}
	return m
}

type devNull struct{}

func (devNull) Write(b []byte) (int, error) { return len(b), nil }

// thisHome is the home of the hub whose configuration is c (the settings
// of the raw map, before decoding, when c is nil).
func thisHome(file string, raw map[string]any) home {
	dataDir, _ := raw["dataDir"].(string)
	store, _ := raw["store"].(string)
	return home{file: absPath(file, ""), dataDir: absPath(dataDir, ""), store: store}
}

// HubUnder reports whether spec launches mcp-hub itself, and if so, where
// that hub would take its configuration from and why it must not run
// under the hub of configuration c (HubEntry.NotRun, "" when it may). mcp-hub
// add and import refuse what would not run.
func (c *Config) HubUnder(spec upstream.Spec) (HubEntry, bool) {
	if spec.InferTransport() != upstream.TransportStdio {
		return HubEntry{}, false
	}
	h, ok := hubHome(spec.Command, spec.Args, spec.Env, spec.Cwd)
	if !ok {
		return HubEntry{}, false
	}
	this := home{file: absPath(c.File, ""), dataDir: absPath(c.DataDir, ""), store: string(c.Store)}
	if this.file == "" {
		this.file = absPath(c.Missing, "") // the default file, which it would read too once written
	}
	return HubEntry{Name: spec.Name, Command: spec.Command, Args: spec.Args, Config: h.file, Store: h.storeWords(), NotRun: h.notRun(this)}, true
}

// hideHubTools leaves out the hub_* tools of a hub under this hub: this
// hub's own tools have those names, so the catalog would hide them anyway,
// each with a warning.
func hideHubTools(spec *upstream.Spec) {
	if !slices.Contains(spec.Tools.Deny, hubTools) {
		spec.Tools.Deny = append(spec.Tools.Deny, hubTools)
	}
}

// hubTools matches the names of the hub's own tools.
const hubTools = "hub_*"

// setAsideHubs takes out of the raw mcpServers the entries that launch
// mcp-hub and must not run under this hub (their home is this hub's, or
// their name is one no upstream may have), and returns every entry that
// launches mcp-hub. The others stay, to be decoded as any entry.
func setAsideHubs(file string, raw map[string]any) []HubEntry {
	servers, _ := raw["mcpServers"].(map[string]any)
	if len(servers) == 0 {
		return nil
	}
	this := thisHome(file, raw)
	var out []HubEntry
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		e, _ := servers[name].(map[string]any)
		command, _ := e["command"].(string)
		var args []string
		list, _ := e["args"].([]any)
		for _, a := range list {
			if s, ok := a.(string); ok {
				args = append(args, s)
			}
		}
		env := map[string]string{}
		if m, ok := e["env"].(map[string]any); ok {
			for k, v := range m {
				if s, ok := v.(string); ok {
					env[k] = s
				}
			}
		}
		cwd, _ := e["cwd"].(string)
		h, ok := hubHome(command, args, env, cwd)
		if !ok {
			continue
		}
		he := HubEntry{Name: name, Command: command, Args: args, Config: h.file, Store: h.storeWords(), NotRun: h.notRun(this)}
		if he.NotRun == "" {
			if err := upstream.ValidName(name); err != nil {
				he.NotRun = "it launches mcp-hub itself, a hub under this hub, but its name cannot be an upstream's (" + err.Error() + "): rename the entry to run it"
			}
		}
		if he.NotRun != "" {
			delete(servers, name)
		}
		out = append(out, he)
	}
	return out
}
