package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/internal/proc"
)

// Sources are where [Load] reads a configuration from. Every field is
// optional: the zero Sources is the defaults.
type Sources struct {
	// File is the config file (YAML, or JSON when it ends in .json). A
	// --config flag among Flags takes its place; when neither names one,
	// $MCP_HUB_CONFIG in Environ does. A file named by any of them must
	// exist.
	File string
	// DefaultFile is read when no file is named and it exists (mcp-hub:
	// [DefaultFile]).
	DefaultFile string
	// Environ holds the MCP_HUB_* variables, as os.Environ returns them.
	Environ []string
	// Flags are the command line, parsed; only the flags the user set (of
	// those [AddFlags] and the serve command define) count.
	Flags *pflag.FlagSet
}

// Load merges defaults < config file < MCP_HUB_* environment < flags, and
// validates the result. Errors are [*Error]s.
func Load(src Sources) (*Config, error) {
	path, explicit := src.DefaultFile, false
	if f := flagNamed(src.Flags, "config"); f != nil && f.Changed {
		path, explicit = f.Value.String(), true
	} else if src.File != "" {
		path, explicit = src.File, true
	} else if v := lookupEnv(src.Environ, "MCP_HUB_CONFIG"); v != "" {
		path, explicit = v, true
	}

	k := koanf.New(".")
	cfgFile, missing, misplaced := "", "", ""
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			var parser koanf.Parser = yamlParser{}
			if strings.EqualFold(filepath.Ext(path), ".json") {
				parser = jsonParser{}
			}
			if err := k.Load(file.Provider(path), parser); err != nil {
				return nil, &Error{File: path, Msg: describeParseError(err)}
			}
			cfgFile = path
		} else if explicit || !errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{File: path, Msg: err.Error()}
		} else {
			missing = path
			// <user config dir>/hub.yaml is a likely mistake for
			// <user config dir>/mcp-hub/hub.yaml.
			up := filepath.Join(filepath.Dir(filepath.Dir(path)), filepath.Base(path))
			if fi, err := os.Stat(up); err == nil && !fi.IsDir() {
				misplaced = up
			}
		}
	}
	var unknownEnv []string // MCP_HUB_* variables that set no key
	envProvider := env.Provider(".", env.Opt{
		Prefix: "MCP_HUB_",
		TransformFunc: func(name, value string) (string, any) {
			if name == "MCP_HUB_CONFIG" || slices.Contains(notSettings, name) {
				return "", nil // names the file, or marks a hub's child; not a key
			}
			key := envKey(name)
			if _, ok := lookupKey(key); !ok {
				unknownEnv = append(unknownEnv, name)
				return "", nil
			}
			if k, ok := lookupKey(key); ok && k.Kind == KindStrings {
				var list []any // lists come comma separated in the environment
				for _, v := range splitList(value) {
					list = append(list, v)
				}
				return key, list
			}
			return key, value
		},
		EnvironFunc: func() []string { return src.Environ },
	})
	if err := k.Load(envProvider, nil); err != nil {
		return nil, &Error{Msg: "environment: " + err.Error()}
	}
	if len(unknownEnv) > 0 {
		slices.Sort(unknownEnv)
		return nil, unknownEnvError(unknownEnv[0])
	}
	if src.Flags != nil {
		keys := flagKeys()
		flagProvider := posflag.ProviderWithFlag(src.Flags, ".", k, func(f *pflag.Flag) (string, any) {
			key, ok := keys[f.Name]
			if !ok || !f.Changed {
				return "", nil
			}
			return key, posflag.FlagVal(src.Flags, f)
		})
		if err := k.Load(flagProvider, nil); err != nil {
			return nil, &Error{Msg: "flags: " + err.Error()}
		}
	}
	cfg, err := decode(cfgFile, k.Raw())
	if err != nil {
		return nil, err
	}
	cfg.Missing, cfg.Misplaced = missing, misplaced
	return cfg, nil
}

// AddFlags defines the flags every mcp-hub command accepts: --config and
// the ones that set a key. The serve command adds --http, --http-no-auth
// and --http-allow-remote, which set keys too.
func AddFlags(fs *pflag.FlagSet) {
	fs.String("config", "", "config file (YAML or JSON; also $MCP_HUB_CONFIG; default <user config dir>/mcp-hub/hub.yaml)")
	fs.String("data-dir", "", "data directory, holding <data dir>/hub.db and <data dir>/http-token (also $MCP_HUB_DATA_DIR; default <user data dir>/mcp-hub)")
	fs.String("store", "", "registration store: a postgres:// URL shared by several hubs (also $MCP_HUB_STORE; default: hub.db in the data directory)")
	fs.String("log-level", "", "debug, info, warn or error (also $MCP_HUB_LOG_LEVEL)")
	fs.String("log-format", "", "text or json (also $MCP_HUB_LOG_FORMAT)")
	fs.String("catalog-policy", "", "merge or prefix (also $MCP_HUB_CATALOG__POLICY)")
	fs.Duration("first-list-wait", 0, "bound on the first tools/list waiting for upstreams (also $MCP_HUB_FIRST_LIST_WAIT)")
}

// DefaultFile is <user config dir>/mcp-hub/hub.yaml, "" when there is no
// user config dir.
func DefaultFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcp-hub", "hub.yaml")
}

// notSettings are MCP_HUB_* variables that are no setting: the marker the
// hub puts in the environment of every stdio upstream it starts
// (proc.MarkerVar), which a hub started by a hub (an upstream that is
// mcp-hub) inherits and must not read as its configuration.
var notSettings = []string{proc.MarkerVar}

// unknownEnvError reports an MCP_HUB_* variable that names no key, with
// the variable of the key closest to it.
func unknownEnvError(name string) error {
	msg := fmt.Sprintf("environment variable %s sets no mcp-hub setting", name)
	if s := suggest(envKey(name)); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", envName(s))
	}
	return &Error{Msg: msg}
}

// envName is the variable that sets key: the inverse of envKey
// (catalog.policy → MCP_HUB_CATALOG__POLICY, dataDir → MCP_HUB_DATA_DIR).
func envName(key string) string {
	var parts []string
	for _, seg := range strings.Split(key, ".") {
		var b strings.Builder
		for i, r := range seg {
			if unicode.IsUpper(r) && i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToUpper(r))
		}
		parts = append(parts, b.String())
	}
	return "MCP_HUB_" + strings.Join(parts, "__")
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

func lookupEnv(environ []string, name string) string {
	for _, kv := range environ {
		if n, v, ok := strings.Cut(kv, "="); ok && n == name {
			return v
		}
	}
	return ""
}

func flagNamed(fs *pflag.FlagSet, name string) *pflag.Flag {
	if fs == nil {
		return nil
	}
	return fs.Lookup(name)
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

var lineColRE = regexp.MustCompile(`line \d+`)

func describeParseError(err error) string {
	msg := err.Error()
	if !lineColRE.MatchString(msg) {
		return "cannot parse: " + msg
	}
	return msg
}
