package clientconfig

import (
	"errors"
	"fmt"
	"strings"
)

// Shape is where a config file keeps its servers.
type Shape int

// The shapes of client config files.
const (
	// ShapeMCPServers is {"mcpServers": {…}}: Claude Desktop, Claude Code,
	// Cursor, Windsurf (and the hub's own config file).
	ShapeMCPServers Shape = iota
	// ShapeVSCode is VS Code's mcp.json: {"servers": {…}}.
	ShapeVSCode
	// ShapeVSCodeSettings is VS Code's settings.json: {"mcp": {"servers": {…}}}.
	ShapeVSCodeSettings
)

// path is the chain of keys from the top of the file to the servers.
func (s Shape) path() []string {
	switch s {
	case ShapeVSCode:
		return []string{"servers"}
	case ShapeVSCodeSettings:
		return []string{"mcp", "servers"}
	}
	return []string{"mcpServers"}
}

// Base is the folder a client's config path starts from.
type Base int

// The bases of config paths.
const (
	Home    Base = iota // the user's home directory (Windows: %USERPROFILE%)
	AppData             // Windows: %APPDATA% (…\AppData\Roaming)
)

// Location is where a client keeps its user-level config file on one OS.
type Location struct {
	GOOS string   // "darwin", "linux", "windows"; "" for every OS
	Base Base     // where Rel starts
	Rel  []string // the path below Base, one element a name
}

// Client is an MCP client whose config file the hub can read and edit.
type Client struct {
	ID    string // for the command line: claude-desktop, claude-code, …
	Name  string // for people
	Shape Shape
	// StdioType: the client's entries say "type": "stdio" (VS Code requires
	// it; Claude Code writes it).
	StdioType bool
	// User lists the user-level config file by OS.
	User []Location
	// Project is the project-level config file, relative to the project
	// folder, "" when the client has none.
	Project string
}

// The documented config file locations (each client's own documentation):
// Claude Desktop ships for macOS and Windows; the Linux path is where its
// community builds keep the file.
var clients = []Client{
	{ID: "claude-desktop", Name: "Claude Desktop", Shape: ShapeMCPServers, User: []Location{
		{GOOS: "darwin", Base: Home, Rel: []string{"Library", "Application Support", "Claude", "claude_desktop_config.json"}},
		{GOOS: "windows", Base: AppData, Rel: []string{"Claude", "claude_desktop_config.json"}},
		{GOOS: "linux", Base: Home, Rel: []string{".config", "Claude", "claude_desktop_config.json"}},
	}},
	{ID: "claude-code", Name: "Claude Code", Shape: ShapeMCPServers, StdioType: true,
		User: []Location{{Base: Home, Rel: []string{".claude.json"}}}, Project: ".mcp.json"},
	{ID: "cursor", Name: "Cursor", Shape: ShapeMCPServers,
		User: []Location{{Base: Home, Rel: []string{".cursor", "mcp.json"}}}, Project: ".cursor/mcp.json"},
	{ID: "vscode", Name: "VS Code", Shape: ShapeVSCode, StdioType: true, User: []Location{
		{GOOS: "darwin", Base: Home, Rel: []string{"Library", "Application Support", "Code", "User", "mcp.json"}},
		{GOOS: "windows", Base: AppData, Rel: []string{"Code", "User", "mcp.json"}},
		{GOOS: "linux", Base: Home, Rel: []string{".config", "Code", "User", "mcp.json"}},
	}, Project: ".vscode/mcp.json"},
	{ID: "windsurf", Name: "Windsurf", Shape: ShapeMCPServers,
		User: []Location{{Base: Home, Rel: []string{".codeium", "windsurf", "mcp_config.json"}}}},
}

// Clients returns the clients the hub knows, in a fixed order.
func Clients() []Client {
	out := make([]Client, len(clients))
	copy(out, clients)
	return out
}

// ClientByID returns the client with id, false when there is none.
func ClientByID(id string) (Client, bool) {
	for _, c := range clients {
		if c.ID == id {
			return c, true
		}
	}
	return Client{}, false
}

// Dirs are the folders config paths start from; [UserPath] takes them so
// that a test (or a program setting up another user) chooses them.
type Dirs struct {
	Home    string // os.UserHomeDir
	AppData string // Windows: $APPDATA
}

// UserPath returns the client's user-level config file on goos.
func (c Client) UserPath(goos string, dirs Dirs) (string, error) {
	for _, l := range c.User {
		if l.GOOS != "" && l.GOOS != goos {
			continue
		}
		base := dirs.Home
		if l.Base == AppData {
			base = dirs.AppData
		}
		if base == "" {
			return "", errors.New("its folder is unknown (no home directory or APPDATA)")
		}
		sep := "/"
		if goos == "windows" {
			sep = `\`
		}
		return strings.TrimRight(base, sep) + sep + strings.Join(l.Rel, sep), nil
	}
	return "", fmt.Errorf("%s keeps no config file on %s", c.Name, goos)
}
