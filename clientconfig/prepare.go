package clientconfig

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// clientOnlyKeys are keys of client config entries that mean nothing to the
// hub: they are dropped, with a note.
var clientOnlyKeys = map[string]string{
	"dev":           "VS Code's development mode",
	"gallery":       "VS Code's gallery reference",
	"version":       "VS Code's server version",
	"autoApprove":   "the client's tool auto-approval list",
	"alwaysAllow":   "the client's tool auto-approval list",
	"disabledTools": "the client's list of disabled tools (use tools.deny in hub.yaml)",
}

var (
	vscodeVarRE = regexp.MustCompile(`\$\{([A-Za-z]+):([^}]*)\}`)
	vscodeWSRE  = regexp.MustCompile(`\$\{(workspaceFolder|workspaceRoot|userHome)\}`)
)

// Prepare turns the value of one of the file's entries into the hub's
// shape: it drops the keys only clients use, reads Windsurf's serverUrl as
// url, reads VS Code's envFile into
// env and rewrites VS Code's variables the hub understands. notes say what
// it did and what the hub cannot resolve. The result goes to
// config.DecodeServer.
func (f *File) Prepare(v any) (raw any, notes []string, err error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil, nil // config.DecodeServer says what is wrong
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		if what, ok := clientOnlyKeys[k]; ok {
			notes = append(notes, fmt.Sprintf("ignored %s (%s)", k, what))
			continue
		}
		out[k] = val
	}
	// Windsurf names a remote server's endpoint serverUrl.
	if su, ok := out["serverUrl"]; ok {
		if _, both := out["url"]; both {
			return nil, notes, errors.New("serverUrl and url: name the endpoint once")
		}
		delete(out, "serverUrl")
		out["url"] = su
		notes = append(notes, "read serverUrl (Windsurf's) as url")
	}
	if f.VSCode {
		home, _ := os.UserHomeDir()
		notes = append(notes, f.vscodeVars(out, home)...)
	}
	if ef, ok := out["envFile"]; ok {
		delete(out, "envFile")
		path, ok := ef.(string)
		if !ok {
			return nil, notes, fmt.Errorf("envFile: expected a string, got %s", describe(ef))
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(f.Path), path)
		}
		vars, err := ReadEnvFile(path)
		if err != nil {
			return nil, notes, fmt.Errorf("envFile: %w", err)
		}
		env, _ := out["env"].(map[string]any)
		if env == nil {
			if out["env"] != nil {
				return nil, notes, errors.New("env: expected a map of strings")
			}
			env = map[string]any{}
		}
		n := 0
		for k, val := range vars {
			if _, set := env[k]; !set {
				env[k] = val
				n++
			}
		}
		out["env"] = env
		notes = append(notes, fmt.Sprintf("read %d variable(s) from envFile %s into env", n, path))
	}
	return out, notes, nil
}

// vscodeVars rewrites VS Code's variables in the strings of an entry:
// ${workspaceFolder} and ${userHome} become paths, ${env:NAME} in env and
// headers values becomes the hub's ${NAME}. Others (${input:…}, ${env:…}
// elsewhere) are left as they are and noted.
func (f *File) vscodeVars(m map[string]any, home string) []string {
	var notes []string
	fix := func(where, s string, envRefs bool) string {
		s = vscodeWSRE.ReplaceAllStringFunc(s, func(ref string) string {
			if strings.Contains(ref, "userHome") {
				if home != "" {
					return home
				}
			} else if f.Workspace != "" {
				return f.Workspace
			}
			notes = append(notes, fmt.Sprintf("%s: %s is unknown here; left as written", where, ref))
			return ref
		})
		return vscodeVarRE.ReplaceAllStringFunc(s, func(ref string) string {
			sub := vscodeVarRE.FindStringSubmatch(ref)
			if sub[1] == "env" && envRefs {
				return "${" + sub[2] + "}"
			}
			notes = append(notes, fmt.Sprintf("%s: %s is resolved by VS Code only; the hub passes it on as written (set a value or ${VAR} instead)", where, ref))
			return ref
		})
	}
	for _, k := range []string{"command", "cwd", "url", "envFile"} {
		if s, ok := m[k].(string); ok {
			m[k] = fix(k, s, false)
		}
	}
	if args, ok := m["args"].([]any); ok {
		for i, a := range args {
			if s, ok := a.(string); ok {
				args[i] = fix(fmt.Sprintf("args[%d]", i), s, false)
			}
		}
	}
	for _, k := range []string{"env", "headers"} {
		if kv, ok := m[k].(map[string]any); ok {
			for name, v := range kv {
				if s, ok := v.(string); ok {
					kv[name] = fix(k+"."+name, s, true)
				}
			}
		}
	}
	return notes
}

// ReadEnvFile reads a dotenv file: NAME=VALUE lines, blank lines and
// # comments, an optional "export " and quotes around the value.
func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s:%d: expected NAME=VALUE", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		vars[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vars, nil
}
