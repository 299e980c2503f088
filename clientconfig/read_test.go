package clientconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStandardizeKeepsOffsets: comments and trailing commas become spaces
// and nothing moves, so errors and entries keep the lines and columns of
// the file.
func TestStandardizeKeepsOffsets(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a": 1, // c "x"` + "\n}", `{"a": 1` + strings.Repeat(" ", 10) + "\n}"},
		{`{"a": "//not", /* c */ "b": [1,],}`, `{"a": "//not",         "b": [1 ] }`},
		{"{/* a\nb */\"x\": \"\\\"/*\"}", "{    \n    \"x\": \"\\\"/*\"}"},
	} {
		v, err := standardize([]byte(tt.in))
		if err != nil {
			t.Fatalf("standardize(%q): %v", tt.in, err)
		}
		if got := v.String(); got != tt.want {
			t.Errorf("standardize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestParseErrors: a file that is not JSON is reported with its line and
// column (in characters), in encoding/json's words, as mcp-hub import
// reported it before the move.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          string // a substring of the error
	}{
		{"missing comma", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {\"command\": \"y\"}\n  }\n}\n",
			"line 4, column 5: invalid JSON: invalid character '\"' after object key:value pair"},
		{"unterminated", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n", "line 4, column 1: invalid JSON: unexpected end of JSON input"},
		{"double comma", `{"mcpServers": {"a": {"command": "x", "args": [1, 2,, 3]}}}`, "line 1, column 53: invalid JSON: invalid character ','"},
		{"columns count characters", "{\"mcpServers\": {\"é\": {\"command\": \"ü\"} x}}", "line 1, column 39: invalid JSON: invalid character 'x'"},
		{"after a comment", "{\n  // a comment\n  \"mcpServers\": {\"a\": 1 2}\n}", "line 3, column 25: invalid JSON: invalid character '2' after object value (expecting ',' or '}')"},
		{"empty", "", "line 1, column 1: invalid JSON: unexpected end of JSON input"},
		{"not an object", "[1]", "expected a JSON object at the top level, got a list"},
		{"no servers", `{"preferences": {}}`, "no MCP servers found: expected mcpServers (Claude Desktop, Claude Code, Cursor) or servers (VS Code)"},
		{"servers not an object", "{\n\"mcpServers\": [1]}", "line 2: mcpServers: expected an object of servers by name"},
		{"both shapes", `{"mcpServers": {}, "servers": {}}`, "has both mcpServers and servers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("/x/client.json", []byte(tt.content))
			if err == nil || !strings.Contains(err.Error(), "/x/client.json: "+tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, "/x/client.json: "+tt.want)
			}
			var se *SyntaxError
			if strings.Contains(tt.want, "invalid JSON") && !errors.As(err, &se) {
				t.Errorf("err is a %T, want a *SyntaxError", err)
			}
		})
	}
	if _, err := Read(filepath.Join(t.TempDir(), "nope.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// importFixture is a file under testdata/import, the client config files
// mcp-hub import is tested with.
func importFixture(t *testing.T, rel string) string {
	abs, err := filepath.Abs(filepath.Join("..", "testdata", "import", rel))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestReadShapes: each client's shape is found, with the entries in file
// order, the line of each name, and later definitions of the same name.
func TestReadShapes(t *testing.T) {
	type entry struct {
		Name              string
		Line, RedefinedAt int
	}
	for _, tt := range []struct {
		file   string
		shape  Shape
		vscode bool
		want   []entry
	}{
		{"claude_desktop_config.json", ShapeMCPServers, false, []entry{{"filesystem", 4, 0}, {"github", 8, 0}, {"memory", 13, 28},
			{"my notes", 17, 0}, {"hub_tools", 20, 0}, {"sqlite", 23, 0}, {"memory", 28, 0}}},
		{"vscode/.vscode/mcp.json", ShapeVSCode, true, []entry{{"workspace-fs", 7, 0}, {"api", 17, 0}, {"events", 22, 0}, {"Bad Name!", 26, 0}}},
		{"vscode-settings.json", ShapeVSCodeSettings, true, nil},
	} {
		t.Run(tt.file, func(t *testing.T) {
			f, err := Read(importFixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if f.Shape != tt.shape || f.VSCode != tt.vscode {
				t.Errorf("shape %d, VS Code %v; want %d, %v", f.Shape, f.VSCode, tt.shape, tt.vscode)
			}
			var got []entry
			for _, e := range f.Entries {
				got = append(got, entry{e.Name, e.Line, e.RedefinedAt})
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("entries (-want +got):\n%s", diff)
				}
			} else if len(got) == 0 {
				t.Errorf("no entries")
			}
		})
	}
}

// TestPrepare: VS Code's entries get their envFile read into env (env
// wins), ${workspaceFolder} and ${env:NAME} (in env and headers) rewritten,
// client-only keys dropped; each with a note.
func TestPrepare(t *testing.T) {
	f, err := Read(importFixture(t, "vscode/.vscode/mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	ws := importFixture(t, "vscode")
	if f.Workspace != ws {
		t.Errorf("workspace %q, want %q", f.Workspace, ws)
	}
	byName := map[string]any{}
	for _, e := range f.Entries {
		byName[e.Name] = e.Value
	}
	raw, notes, err := f.Prepare(byName["workspace-fs"])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "stdio", "command": "npx", "cwd": ws,
		"args": []any{"-y", "@modelcontextprotocol/server-filesystem", ws},
		"env":  map[string]any{"DEBUG": "mcp:*", "API_KEY": "from-env-wins", "NODE_ENV": "production", "ALLOWED_DIR": "/tmp/allowed"}}
	if diff := cmp.Diff(want, raw); diff != "" {
		t.Errorf("workspace-fs (-want +got):\n%s", diff)
	}
	if !slices.Contains(notes, "ignored dev (VS Code's development mode)") ||
		!slices.Contains(notes, "read 2 variable(s) from envFile "+filepath.Join(ws, ".env")+" into env") {
		t.Errorf("notes = %q", notes)
	}
	raw, notes, err = f.Prepare(byName["api"])
	if err != nil {
		t.Fatal(err)
	}
	if h := raw.(map[string]any)["headers"]; !cmp.Equal(h, map[string]any{"Authorization": "Bearer ${input:api-token}", "X-User": "${USER}"}) {
		t.Errorf("api headers = %v", h)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "headers.Authorization: ${input:api-token} is resolved by VS Code only") {
		t.Errorf("api notes = %q", notes)
	}
}

func TestReadEnvFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".env")
	if err := os.WriteFile(p, []byte("# c\nA=1\nexport B=\"two words\"\n\nC='x=y'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEnvFile(p)
	if err != nil || !cmp.Equal(got, map[string]string{"A": "1", "B": "two words", "C": "x=y"}) {
		t.Errorf("ReadEnvFile = %v, %v", got, err)
	}
	if err := os.WriteFile(p, []byte("A=1\nnot a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEnvFile(p); err == nil || !strings.Contains(err.Error(), ":2: expected NAME=VALUE") {
		t.Errorf("a bad line: %v", err)
	}
}

// TestPrepareServerURL: Windsurf's serverUrl is the hub's url, with a note;
// an entry naming both is refused.
func TestPrepareServerURL(t *testing.T) {
	f := &File{Path: "mcp_config.json", Shape: ShapeMCPServers}
	for _, tc := range []struct {
		in   map[string]any
		want map[string]any
		err  string
	}{
		{in: map[string]any{"serverUrl": "https://a.example/mcp", "headers": map[string]any{"X": "1"}},
			want: map[string]any{"url": "https://a.example/mcp", "headers": map[string]any{"X": "1"}}},
		{in: map[string]any{"url": "https://a.example/mcp"}, want: map[string]any{"url": "https://a.example/mcp"}},
		{in: map[string]any{"serverUrl": "https://a.example/mcp", "url": "https://b.example/mcp"}, err: "serverUrl and url: name the endpoint once"},
	} {
		raw, notes, err := f.Prepare(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Prepare(%v) = %v, %v; want error %q", tc.in, raw, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(raw, tc.want) {
			t.Errorf("Prepare(%v) = %v, %v; want %v", tc.in, raw, err, tc.want)
		}
		if _, had := tc.in["serverUrl"]; had != slices.Contains(notes, "read serverUrl (Windsurf's) as url") {
			t.Errorf("Prepare(%v): notes %q", tc.in, notes)
		}
	}
}
