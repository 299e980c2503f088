package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Reading the MCP server list of a client's config file: Claude Desktop's
// claude_desktop_config.json, Cursor's and Claude Code's mcp.json
// (mcpServers), VS Code's .vscode/mcp.json (servers) or its settings.json
// (mcp.servers). The entries themselves are decoded by decodeServer, the
// decoder of the hub's own config file.

// clientConfig is the server list of one client config file.
type clientConfig struct {
	Path   string
	Format string // what the file looked like, for people
	VSCode bool   // VS Code's shape: its ${…} variables and envFile apply
	// Workspace is the VS Code workspace folder (the parent of .vscode/),
	// "" when unknown.
	Workspace string
	Entries   []clientEntry
}

// clientEntry is one server of a client config file, in file order.
type clientEntry struct {
	Name  string
	Line  int // of its name
	Value any // as encoding/json decodes it
	// RedefinedAt is the line of a later entry of the same name (clients
	// use the last one), 0 when there is none.
	RedefinedAt int
}

// SyntaxError is a client config file that is not valid JSON. Line and
// Column (1-based, in characters) are where the parser gave up.
type SyntaxError struct {
	File         string
	Line, Column int
	Err          error
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: line %d, column %d: invalid JSON: %v", e.File, e.Line, e.Column, e.Err)
}

// Unwrap returns the parser's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// readClientConfig reads the MCP servers of a client's config file. JSON
// with comments and trailing commas (VS Code's JSONC) is accepted.
func readClientConfig(path string) (*clientConfig, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	src := stripJSONC(b)
	var top any
	if err := json.Unmarshal(src, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(b, int(se.Offset)-1)
			if se.Offset >= int64(len(b)) {
				line, col = position(b, len(b))
			}
			return nil, &SyntaxError{File: path, Line: line, Column: col, Err: err}
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, ok := top.(map[string]any); !ok {
		return nil, fmt.Errorf("%s: expected a JSON object at the top level, got %s", path, describe(top))
	}
	top1, err := members(src, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	last := map[string]member{}
	for _, m := range top1 {
		last[m.key] = m
	}
	cc := &clientConfig{Path: path}
	var servers member
	mcp, hasMCP := last["mcpServers"]
	vs, hasVS := last["servers"]
	switch {
	case hasMCP && hasVS:
		return nil, fmt.Errorf("%s: has both mcpServers and servers; keep one", path)
	case hasMCP:
		servers, cc.Format = mcp, "mcpServers: Claude Desktop, Claude Code or Cursor"
	case hasVS:
		servers, cc.Format, cc.VSCode = vs, "servers: VS Code", true
	default:
		settings, ok := last["mcp"]
		if ok {
			inner, err := members(settings.val, settings.valOff)
			if err == nil {
				for _, m := range inner {
					if m.key == "servers" {
						servers, cc.Format, cc.VSCode, hasVS = m, "mcp.servers: VS Code settings", true, true
					}
				}
			}
		}
		if !hasVS {
			return nil, fmt.Errorf("%s: no MCP servers found: expected mcpServers (Claude Desktop, Claude Code, Cursor) or servers (VS Code)", path)
		}
	}
	if cc.VSCode {
		if dir := filepath.Dir(path); filepath.Base(dir) == ".vscode" {
			cc.Workspace = filepath.Dir(dir)
		}
	}
	if string(servers.val) == "null" {
		return cc, nil
	}
	entries, err := members(servers.val, servers.valOff)
	if err != nil {
		line, _ := position(b, servers.valOff)
		return nil, fmt.Errorf("%s: line %d: %s: %w", path, line, servers.key, err)
	}
	lastAt := map[string]int{}
	for i, m := range entries {
		var v any
		if err := json.Unmarshal(m.val, &v); err != nil { // cannot happen: src is valid
			return nil, fmt.Errorf("%s: %s.%s: %w", path, servers.key, m.key, err)
		}
		line, _ := position(b, m.keyEnd-1)
		if j, ok := lastAt[m.key]; ok {
			cc.Entries[j].RedefinedAt = line
		}
		lastAt[m.key] = i
		cc.Entries = append(cc.Entries, clientEntry{Name: m.key, Line: line, Value: v})
	}
	return cc, nil
}

// member is one member of a JSON object, with offsets into the document.
type member struct {
	key    string
	keyEnd int // offset just after the key's closing quote
	val    json.RawMessage
	valOff int // offset of val
}

var errNotObject = errors.New("expected an object of servers by name")

// members returns the members of the JSON object b, in order; base is b's
// offset in the document.
func members(b []byte, base int) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		keyEnd := base + int(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, keyEnd: keyEnd, val: raw, valOff: base + int(dec.InputOffset()) - len(raw)})
	}
	return out, nil
}

// position returns the 1-based line and column (in characters) of offset
// off in b.
func position(b []byte, off int) (line, col int) {
	off = max(0, min(off, len(b)))
	before := b[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}

// stripJSONC blanks out // and /* */ comments and trailing commas outside
// strings, keeping every offset (and newline) where it was.
func stripJSONC(b []byte) []byte {
	out := bytes.Clone(b)
	inStr, esc := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				continue // unterminated: leave it for the parser to report
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		}
	}
	inStr, esc = false, false
	for i, c := range out {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			continue
		}
		if c == ',' {
			j := i + 1
			for j < len(out) && strings.IndexByte(" \t\r\n", out[j]) >= 0 {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out
}

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

// prepareEntry turns a client's entry into the hub's shape: it drops the
// keys only clients use, reads VS Code's envFile into env and rewrites VS
// Code's variables the hub understands. notes say what it did and what the
// hub cannot resolve. The result goes to decodeServer.
func (cc *clientConfig) prepareEntry(v any) (raw any, notes []string, err error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil, nil // decodeServer says what is wrong
	}
	out := make(map[string]any, len(m))
	for k, val := range m {
		if what, ok := clientOnlyKeys[k]; ok {
			notes = append(notes, fmt.Sprintf("ignored %s (%s)", k, what))
			continue
		}
		out[k] = val
	}
	if cc.VSCode {
		home, _ := os.UserHomeDir()
		notes = append(notes, cc.vscodeVars(out, home)...)
	}
	if ef, ok := out["envFile"]; ok {
		delete(out, "envFile")
		path, ok := ef.(string)
		if !ok {
			return nil, notes, fmt.Errorf("envFile: expected a string, got %s", describe(ef))
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(filepath.Dir(cc.Path), path)
		}
		vars, err := readEnvFile(path)
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
func (cc *clientConfig) vscodeVars(m map[string]any, home string) []string {
	var notes []string
	fix := func(where, s string, envRefs bool) string {
		s = vscodeWSRE.ReplaceAllStringFunc(s, func(ref string) string {
			if strings.Contains(ref, "userHome") {
				if home != "" {
					return home
				}
			} else if cc.Workspace != "" {
				return cc.Workspace
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

// readEnvFile reads a dotenv file: NAME=VALUE lines, blank lines and
// # comments, an optional "export " and quotes around the value.
func readEnvFile(path string) (map[string]string, error) {
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
