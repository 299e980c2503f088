package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Server is one entry of a client's server list, in the keys clients share.
type Server struct {
	Type     string            `json:"type,omitempty"`
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`
}

// HubEntry returns the entry that makes client c launch the hub: command
// (the mcp-hub binary) with args, as a stdio server.
func HubEntry(c Client, command string, args ...string) Server {
	s := Server{Command: command, Args: args}
	if c.StdioType {
		s.Type = "stdio"
	}
	return s
}

// WriteMCPServers writes servers as a Claude Desktop document,
// {"mcpServers": …}, indented by two spaces.
func WriteMCPServers(w io.Writer, servers map[string]Server) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"mcpServers": servers})
}

// SetServer adds the server name to the config file content b (of the
// given shape), or replaces the value of the entry of that name, and
// returns the new content. Everything else stays byte for byte: other
// entries, other keys, comments, indentation. The new entry is indented
// like its neighbours. Empty b is a new file.
func SetServer(b []byte, shape Shape, name string, s Server) ([]byte, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}\n")
	}
	v, err := hujson.Parse(b)
	if err != nil {
		return nil, syntaxError("", b, err)
	}
	top, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, errors.New("expected a JSON object at the top level")
	}
	unit := indentUnit(top)
	obj, indent := top, ""
	for _, key := range shape.path() {
		m := lastMember(obj, key)
		if m == nil {
			addMember(obj, indent, unit, key, &hujson.Object{})
			m = &obj.Members[len(obj.Members)-1]
		}
		if m.Value.Value.Kind() == 'n' {
			m.Value.Value = &hujson.Object{}
		}
		inner, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			return nil, fmt.Errorf("%s: %w", strings.Join(shape.path(), "."), errNotObject)
		}
		obj, indent = inner, memberIndent(obj, indent, unit)
	}
	in, step := memberIndent(obj, indent, unit), unit
	if !multiline(obj) {
		in, step = "", "" // one line: a compact entry
	}
	val, err := render(s, in, step)
	if err != nil {
		return nil, err
	}
	if m := lastMember(obj, name); m != nil {
		m.Value.Value = val
	} else {
		addMember(obj, indent, unit, name, val)
	}
	return v.Pack(), nil
}

// RemoveServer removes every entry named name from the config file content
// b, with the comments before it and the one on its line, and returns the
// new content and whether there was one. The rest stays byte for byte, so
// removing what [SetServer] added gives the file back as it was.
func RemoveServer(b []byte, shape Shape, name string) ([]byte, bool, error) {
	v, err := hujson.Parse(b)
	if err != nil {
		return nil, false, syntaxError("", b, err)
	}
	obj, ok := v.Value.(*hujson.Object)
	for _, key := range shape.path() {
		if !ok {
			break
		}
		m := lastMember(obj, key)
		if m == nil {
			return b, false, nil
		}
		obj, ok = m.Value.Value.(*hujson.Object)
	}
	if !ok {
		return b, false, nil
	}
	found := false
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if nameOf(&obj.Members[i]) == name {
			removeMember(obj, i)
			found = true
		}
	}
	if !found {
		return b, false, nil
	}
	return v.Pack(), true, nil
}

// removeMember removes member i of obj. What stood between the member
// before it (or the opening brace) and the member, a comment on that line
// aside, goes with it, and so does a comment on its own line; the spacing
// after it stays.
func removeMember(obj *hujson.Object, i int) {
	trailing := hasTrailingComma(obj)
	last := i == len(obj.Members)-1
	lead := obj.Members[i].Name.BeforeExtra
	keep, own := splitFirstLine(lead) // keep: a comment on the line before
	next := &obj.AfterExtra
	if !last {
		next = &obj.Members[i+1].Name.BeforeExtra
	}
	_, after := splitFirstLine(*next) // the removed member's line comment goes too
	if i == 0 && !bytes.Contains(after, nl) && !bytes.Contains(own, nl) {
		after = own // all on one line: the spacing before the first member
	}
	if keep != nil && !bytes.HasPrefix(after, nl) {
		after = append(slices.Clone(nl), after...) // a line comment needs its newline
	}
	*next = append(bytes.Clone(keep), after...)
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if n := len(obj.Members); last && n > 0 {
		prev := &obj.Members[n-1].Value
		switch {
		case trailing && prev.AfterExtra == nil:
			prev.AfterExtra = []byte{}
		case !trailing && prev.AfterExtra != nil:
			// What stood before its comma moves in front of the closing
			// brace: strict JSON has no trailing comma.
			obj.AfterExtra = append(prev.AfterExtra, obj.AfterExtra...)
			prev.AfterExtra = nil
		}
	}
	if len(obj.Members) == 0 && len(bytes.TrimSpace(obj.AfterExtra)) == 0 {
		obj.AfterExtra = nil // {}
	}
}

var nl = []byte("\n")

// splitFirstLine splits extra after its first line when that line holds a
// comment: first is the line without its newline, rest the newline on.
// Otherwise first is nil and rest is extra.
func splitFirstLine(extra []byte) (first, rest []byte) {
	line := extra
	if i := bytes.IndexByte(extra, '\n'); i >= 0 {
		line = extra[:i]
	}
	if !bytes.Contains(line, []byte("//")) && !bytes.Contains(line, []byte("/*")) {
		return nil, extra
	}
	return line, extra[len(line):]
}

// hasTrailingComma is hujson's rule: the last value's AfterExtra is set
// when a comma follows it.
func hasTrailingComma(obj *hujson.Object) bool {
	n := len(obj.Members)
	return n > 0 && obj.Members[n-1].Value.AfterExtra != nil
}

// multiline reports whether obj is written over several lines.
func multiline(obj *hujson.Object) bool {
	if len(obj.Members) == 0 {
		return true // an empty object opens up for its first member
	}
	for _, m := range obj.Members {
		if bytes.Contains(m.Name.BeforeExtra, []byte("\n")) {
			return true
		}
	}
	return bytes.Contains(obj.AfterExtra, []byte("\n"))
}

// lastLineIndent returns the white space that ends extra after its last
// newline, ok false when extra has no newline.
func lastLineIndent(extra []byte) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	rest := extra[i+1:]
	return string(rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))]), true
}

// memberIndent is the indentation of obj's members; indent is that of the
// line obj closes on.
func memberIndent(obj *hujson.Object, indent, unit string) string {
	for _, m := range obj.Members {
		if in, ok := lastLineIndent(m.Name.BeforeExtra); ok {
			return in
		}
	}
	return indent + unit
}

// indentUnit is the file's indentation step: that of its top-level keys,
// two spaces when it has none.
func indentUnit(top *hujson.Object) string {
	if in, ok := lastLineIndent(firstNameExtra(top)); ok && in != "" {
		return in
	}
	return "  "
}

func firstNameExtra(obj *hujson.Object) []byte {
	if len(obj.Members) == 0 {
		return nil
	}
	return obj.Members[0].Name.BeforeExtra
}

// render encodes s as a value whose lines are indented for a member
// indented by indent; no unit means on one line.
func render(s Server, indent, unit string) (hujson.ValueTrimmed, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, unit)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	v, err := hujson.Parse(bytes.TrimSpace(buf.Bytes()))
	if err != nil {
		return nil, err
	}
	return v.Value, nil
}

// addMember appends name: val to obj, on a line of its own indented like
// the other members when obj spans lines (indent is that of obj's closing
// line), after its last member otherwise. A comment on the line of the old
// last member stays there, after its new comma; a trailing comma stays.
func addMember(obj *hujson.Object, indent, unit, name string, val hujson.ValueTrimmed) {
	m := hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(name)}, Value: hujson.Value{BeforeExtra: []byte(" "), Value: val}}
	if !multiline(obj) {
		m.Name.BeforeExtra = []byte(" ")
		if hasTrailingComma(obj) {
			m.Value.AfterExtra = []byte{}
		}
		obj.Members = append(obj.Members, m)
		return
	}
	in := memberIndent(obj, indent, unit)
	tail := obj.AfterExtra
	if len(obj.Members) == 0 {
		// Keep any comment inside the empty object above the new member.
		m.Name.BeforeExtra = append(bytes.TrimRight(tail, " \t\r\n"), "\n"+in...)
		obj.AfterExtra = []byte("\n" + indent)
	} else {
		sameLine, rest := tail, []byte(nil)
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			sameLine, rest = tail[:i], tail[i:]
		}
		if len(bytes.TrimSpace(sameLine)) == 0 {
			sameLine = nil
		}
		m.Name.BeforeExtra = append(bytes.Clone(sameLine), "\n"+in...)
		if rest == nil {
			rest = []byte("\n" + indent)
		}
		obj.AfterExtra = rest
		if hasTrailingComma(obj) {
			m.Value.AfterExtra = []byte{}
		}
	}
	obj.Members = append(obj.Members, m)
}
