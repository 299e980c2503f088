// Package clientconfig reads and edits the MCP server lists of MCP clients'
// config files: Claude Desktop's claude_desktop_config.json, Claude Code's
// ~/.claude.json, Cursor's and Windsurf's mcp.json files (mcpServers), VS
// Code's mcp.json (servers) and its settings.json (mcp.servers).
//
// Files are JSON with comments and trailing commas allowed (VS Code's
// JSONC), read and edited through github.com/tailscale/hujson: an edit
// changes one server entry and leaves every other byte of the file as it
// was, comments and keys the hub does not know included.
//
// [Clients] lists the clients and where each keeps its file on each OS.
package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// File is the server list of one client config file.
type File struct {
	Path   string
	Shape  Shape
	Format string // what the file looked like, for people
	VSCode bool   // VS Code's shape: its ${…} variables and envFile apply
	// Workspace is the VS Code workspace folder (the parent of .vscode/),
	// "" when unknown.
	Workspace string
	Entries   []Entry
}

// Entry is one server of a client config file, in file order.
type Entry struct {
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

var errNotObject = errors.New("expected an object of servers by name")

// ErrNoServers is the error of [Parse] for a JSON object that has no list
// of servers in any shape: a client's config file before its first server.
var ErrNoServers = errors.New("no MCP servers found: expected mcpServers (Claude Desktop, Claude Code, Cursor) or servers (VS Code)")

// Read reads the MCP servers of a client's config file.
func Read(path string) (*File, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse reads the MCP servers of the config file content b; path names it
// in errors and locates VS Code's workspace.
func Parse(path string, b []byte) (*File, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	v, err := standardize(b)
	if err != nil {
		return nil, syntaxError(path, b, err)
	}
	src := v.Pack() // standard JSON, every offset and line where it was in b
	var top any
	if err := json.Unmarshal(src, &top); err != nil {
		return nil, jsonError(path, b, err)
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%s: expected a JSON object at the top level, got %s", path, describe(top))
	}
	f := &File{Path: path}
	servers, err := f.locate(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.VSCode {
		if dir := filepath.Dir(path); filepath.Base(dir) == ".vscode" {
			f.Workspace = filepath.Dir(dir)
		}
	}
	if servers.Value.Value.Kind() == 'n' {
		return f, nil
	}
	list, ok := servers.Value.Value.(*hujson.Object)
	if !ok {
		line, _ := position(b, servers.Value.StartOffset)
		return nil, fmt.Errorf("%s: line %d: %s: %w", path, line, nameOf(servers), errNotObject)
	}
	lastAt := map[string]int{}
	for i, m := range list.Members {
		var val any
		if err := json.Unmarshal(src[m.Value.StartOffset:m.Value.EndOffset], &val); err != nil { // cannot happen: src is valid
			return nil, fmt.Errorf("%s: %s.%s: %w", path, nameOf(servers), nameOf(&m), err)
		}
		name := nameOf(&m)
		line, _ := position(b, m.Name.StartOffset)
		if j, ok := lastAt[name]; ok {
			f.Entries[j].RedefinedAt = line
		}
		lastAt[name] = i
		f.Entries = append(f.Entries, Entry{Name: name, Line: line, Value: val})
	}
	return f, nil
}

// standardize parses b, JSON with comments and trailing commas, into
// standard JSON: comments and trailing commas become spaces, so every
// offset and line stays where it was in b.
func standardize(b []byte) (hujson.Value, error) {
	// Standardize rewrites in place and a Value aliases what it was parsed
	// from, so parse a copy. (Value.Clone would lose the trailing commas:
	// it copies their empty marker as nil.)
	v, err := hujson.Parse(bytes.Clone(b))
	if err != nil {
		return v, err
	}
	v.Standardize()
	return v, nil
}

// locate finds the member that holds the servers and sets the file's shape.
func (f *File) locate(top *hujson.Object) (*hujson.ObjectMember, error) {
	mcp, vs := lastMember(top, "mcpServers"), lastMember(top, "servers")
	switch {
	case mcp != nil && vs != nil:
		return nil, errors.New("has both mcpServers and servers; keep one")
	case mcp != nil:
		f.Shape, f.Format = ShapeMCPServers, "mcpServers: Claude Desktop, Claude Code or Cursor"
		return mcp, nil
	case vs != nil:
		f.Shape, f.Format, f.VSCode = ShapeVSCode, "servers: VS Code", true
		return vs, nil
	}
	if settings := lastMember(top, "mcp"); settings != nil {
		if inner, ok := settings.Value.Value.(*hujson.Object); ok {
			if s := lastMember(inner, "servers"); s != nil {
				f.Shape, f.Format, f.VSCode = ShapeVSCodeSettings, "mcp.servers: VS Code settings", true
				return s, nil
			}
		}
	}
	return nil, ErrNoServers
}

// lastMember returns the last member of obj named name (the one clients
// use), nil when there is none.
func lastMember(obj *hujson.Object, name string) *hujson.ObjectMember {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if nameOf(&obj.Members[i]) == name {
			return &obj.Members[i]
		}
	}
	return nil
}

func nameOf(m *hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// hujsonPosRE reads the position out of hujson's error text.
var hujsonPosRE = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// syntaxError reports where hujson gave up on b, in encoding/json's words
// when encoding/json gives up at the same place (no comment or trailing
// comma before it), in hujson's otherwise.
func syntaxError(path string, b []byte, herr error) error {
	sub := hujsonPosRE.FindStringSubmatch(herr.Error())
	if sub == nil {
		return &SyntaxError{File: path, Line: 1, Column: 1, Err: herr}
	}
	line, _ := strconv.Atoi(sub[1])
	col, _ := strconv.Atoi(sub[2]) // in bytes
	off := offsetOf(b, line, col)
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		if je, ok := jsonError(path, b, err).(*SyntaxError); ok {
			if jl, jc := position(b, off); jl == je.Line && jc == je.Column {
				return je
			}
		}
	}
	line, col = position(b, off)
	return &SyntaxError{File: path, Line: line, Column: col, Err: errors.New(sub[3])}
}

// JSONError locates err, the error encoding/json returned for the content
// b of the file path, in b: a syntax error becomes a [*SyntaxError] with
// the line and column where the parser gave up; other errors are returned
// wrapped with path. The hub's own JSON config files are reported with it.
func JSONError(path string, b []byte, err error) error { return jsonError(path, b, err) }

// jsonError locates an encoding/json error in b.
func jsonError(path string, b []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("%s: %w", path, err)
	}
	line, col := position(b, int(se.Offset)-1)
	if se.Offset >= int64(len(b)) {
		line, col = position(b, len(b))
	}
	return &SyntaxError{File: path, Line: line, Column: col, Err: err}
}

// offsetOf returns the offset of 1-based line and byte column in b.
func offsetOf(b []byte, line, col int) int {
	off := 0
	for ; line > 1; line-- {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			return len(b)
		}
		off += i + 1
	}
	return min(off+col-1, len(b))
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

// describe names a decoded JSON value for an error message.
func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	case string:
		return "a string"
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}
