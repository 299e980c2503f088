package clientconfig

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestEdit")

// editCases are a config file of each client, as the client writes it:
// keys the hub does not know, and comments and trailing commas where the
// format has them.
var editCases = []struct {
	client, file string
	shape        Shape
	replace      string // an entry to replace, then to remove
}{
	{"claude-desktop", "claude_desktop_config.json", ShapeMCPServers, "github"},
	{"claude-code", "claude.json", ShapeMCPServers, "context7"},
	{"cursor", "cursor_mcp.json", ShapeMCPServers, "remote"},
	{"vscode", "vscode_mcp.json", ShapeVSCode, "memory"},
	{"vscode", "vscode_settings.json", ShapeVSCodeSettings, "time"},
	{"windsurf", "windsurf_mcp_config.json", ShapeMCPServers, "zapier"},
}

// TestEdit: adding, replacing and removing one server changes that entry
// and not one other byte; removing what was added gives the file back.
func TestEdit(t *testing.T) {
	for _, tt := range editCases {
		t.Run(tt.file, func(t *testing.T) {
			c, ok := ClientByID(tt.client)
			if !ok || c.Shape != tt.shape && tt.shape != ShapeVSCodeSettings {
				t.Fatalf("client %s: %v, shape %v", tt.client, ok, c.Shape)
			}
			orig, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			hubEntry := HubEntry(c, "/usr/local/bin/mcp-hub", "--config", "/home/me/hub.yaml")

			added, err := SetServer(orig, tt.shape, "mcp-hub", hubEntry)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file+".add", added)
			checkEntries(t, added, orig, "mcp-hub", hubEntry)
			back, found, err := RemoveServer(added, tt.shape, "mcp-hub")
			if err != nil || !found {
				t.Fatalf("remove the added entry: %v, %v", found, err)
			}
			if !bytes.Equal(back, orig) {
				t.Errorf("add then remove does not give the file back:\n%s", cmp.Diff(string(orig), string(back)))
			}

			repl := Server{Type: hubEntry.Type, Command: "my-server", Env: map[string]string{"TOKEN": "${TOKEN}"}}
			replaced, err := SetServer(orig, tt.shape, tt.replace, repl)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.file+".replace", replaced)
			checkEntries(t, replaced, orig, tt.replace, repl)

			removed, found, err := RemoveServer(orig, tt.shape, tt.replace)
			if err != nil || !found {
				t.Fatalf("remove %s: %v, %v", tt.replace, found, err)
			}
			golden(t, tt.file+".remove", removed)
			f, err := Parse(tt.file, removed)
			if err != nil {
				t.Fatalf("the file after remove does not parse: %v\n%s", err, removed)
			}
			for _, e := range f.Entries {
				if e.Name == tt.replace {
					t.Errorf("%s is still there after remove", tt.replace)
				}
			}
			if same, found, err := RemoveServer(orig, tt.shape, "not-there"); err != nil || found || !bytes.Equal(same, orig) {
				t.Errorf("remove of a missing entry: found %v, err %v, changed %v", found, err, !bytes.Equal(same, orig))
			}
		})
	}
}

// checkEntries: after an edit the file parses, name has value s, and every
// other entry is as it was.
func checkEntries(t *testing.T, edited, orig []byte, name string, s Server) {
	t.Helper()
	before, err := Parse("before", orig)
	if err != nil {
		t.Fatal(err)
	}
	after, err := Parse("after", edited)
	if err != nil {
		t.Fatalf("the edited file does not parse: %v\n%s", err, edited)
	}
	want := map[string]any{}
	for _, e := range before.Entries {
		want[e.Name] = e.Value
	}
	var sv any
	b, _ := jsonMarshal(s)
	_ = jsonUnmarshal(b, &sv)
	want[name] = sv
	got := map[string]any{}
	for _, e := range after.Entries {
		got[e.Name] = e.Value
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries after the edit (-want +got):\n%s", diff)
	}
}

// golden compares got with testdata/NAME.golden (-update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
	}
}

// TestSetServerNewFile: an empty or missing file becomes one that holds
// the server, in the client's shape.
func TestSetServerNewFile(t *testing.T) {
	for _, tt := range []struct {
		shape Shape
		want  string
	}{
		{ShapeMCPServers, "{\n  \"mcpServers\": {\n    \"hub\": {\n      \"command\": \"mcp-hub\"\n    }\n  }\n}\n"},
		{ShapeVSCode, "{\n  \"servers\": {\n    \"hub\": {\n      \"type\": \"stdio\",\n      \"command\": \"mcp-hub\"\n    }\n  }\n}\n"},
		{ShapeVSCodeSettings, "{\n  \"mcp\": {\n    \"servers\": {\n      \"hub\": {\n        \"command\": \"mcp-hub\"\n      }\n    }\n  }\n}\n"},
	} {
		s := Server{Command: "mcp-hub"}
		if tt.shape == ShapeVSCode {
			s.Type = "stdio"
		}
		got, err := SetServer(nil, tt.shape, "hub", s)
		if err != nil || string(got) != tt.want {
			t.Errorf("shape %d: %v\n%s\nwant\n%s", tt.shape, err, got, tt.want)
		}
	}
}

// TestEditLayouts: entries on one line, an empty list, null, and comments
// next to the entry that goes.
func TestEditLayouts(t *testing.T) {
	s := Server{Command: "x"}
	for _, tt := range []struct{ name, in, add, remove string }{
		{"one line", `{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}`,
			`{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}, "new": {"command":"x"}}}`,
			`{"mcpServers": {"b": {"command": "b"}}}`},
		{"empty", "{\n  \"mcpServers\": {}\n}\n",
			"{\n  \"mcpServers\": {\n    \"new\": {\n      \"command\": \"x\"\n    }\n  }\n}\n", ""},
		{"null", "{\"mcpServers\": null}",
			"{\"mcpServers\": {\n    \"new\": {\n      \"command\": \"x\"\n    }\n  }}", ""},
		{"comments", "{\n  \"mcpServers\": { // servers\n    // the a server\n    \"a\": {\"command\": \"a\"}, // about a\n    \"b\": {\"command\": \"b\"} // about b\n  }\n}\n",
			"{\n  \"mcpServers\": { // servers\n    // the a server\n    \"a\": {\"command\": \"a\"}, // about a\n    \"b\": {\"command\": \"b\"}, // about b\n    \"new\": {\n      \"command\": \"x\"\n    }\n  }\n}\n",
			"{\n  \"mcpServers\": { // servers\n    \"b\": {\"command\": \"b\"} // about b\n  }\n}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetServer([]byte(tt.in), ShapeMCPServers, "new", s)
			if err != nil || string(got) != tt.add {
				t.Errorf("add: %v\n%s\nwant\n%s", err, got, tt.add)
			}
			if tt.remove == "" {
				return
			}
			got, _, err = RemoveServer([]byte(tt.in), ShapeMCPServers, "a")
			if err != nil || string(got) != tt.remove {
				t.Errorf("remove a: %v\n%s\nwant\n%s", err, got, tt.remove)
			}
		})
	}
	if _, err := SetServer([]byte(`{"mcpServers": [1]}`), ShapeMCPServers, "new", s); err == nil {
		t.Errorf("servers that are not an object: no error")
	}
	if _, err := SetServer([]byte(`{"mcpServers": {`), ShapeMCPServers, "new", s); err == nil {
		t.Errorf("invalid JSON: no error")
	}
}

func jsonMarshal(v any) ([]byte, error)   { return json.Marshal(v) }
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
