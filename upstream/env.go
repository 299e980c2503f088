package upstream

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
)

// inheritedEnv lists the variables a child inherits from the hub's own
// environment. Everything else (tokens, proxies, the hub's own secrets) stays
// out unless the upstream declares it.
var inheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TMPDIR", "TMP", "TEMP", "TZ", "TERM",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME",
	// Windows essentials.
	"SystemRoot", "SystemDrive", "ComSpec", "PATHEXT", "APPDATA", "LOCALAPPDATA", "USERPROFILE",
	"ProgramData", "ProgramFiles", "ProgramFiles(x86)", "windir",
}

// inheritedPrefixes lists prefixes of inherited variables.
var inheritedPrefixes = []string{"LC_"}

// ResolveValue resolves one env or header value: "file:<path>" is replaced by
// the file's content without trailing newlines, and every "${NAME}" by the
// hub's environment variable NAME. lookup is os.LookupEnv in production. A
// missing variable or unreadable file is an error that names it.
func ResolveValue(v string, lookup func(string) (string, bool)) (string, error) {
	if path, ok := strings.CutPrefix(v, "file:"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	if !strings.Contains(v, "${") {
		return v, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", v)
		}
		name := v[i+2 : i+j]
		val, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		b.WriteString(v[:i])
		b.WriteString(val)
		v = v[i+j+1:]
	}
}

// resolveMap resolves every value of m; the error names the key.
func resolveMap(kind string, m map[string]string, lookup func(string) (string, bool)) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := ResolveValue(m[k], lookup)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, k, err)
		}
		out[k] = v
	}
	return out, nil
}

// childEnv builds a child's environment: the inherited subset of environ,
// plus names in extra, plus declared (resolved) values, which win.
func childEnv(environ []string, extra []string, declared map[string]string) []string {
	keep := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if inherits(k, extra) {
			keep[k] = v
		}
	}
	for k, v := range declared {
		keep[k] = v
	}
	out := make([]string, 0, len(keep))
	for k, v := range keep {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func inherits(name string, extra []string) bool {
	if slices.Contains(inheritedEnv, name) || slices.Contains(extra, name) {
		return true
	}
	for _, p := range inheritedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
