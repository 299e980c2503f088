package clientconfig

import "testing"

// TestUserPaths: each client's documented user config file on each OS.
func TestUserPaths(t *testing.T) {
	mac := Dirs{Home: "/Users/me"}
	linux := Dirs{Home: "/home/me"}
	win := Dirs{Home: `C:\Users\me`, AppData: `C:\Users\me\AppData\Roaming`}
	for _, tt := range []struct {
		client, goos string
		dirs         Dirs
		want         string
	}{
		{"claude-desktop", "darwin", mac, "/Users/me/Library/Application Support/Claude/claude_desktop_config.json"},
		{"claude-desktop", "windows", win, `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`},
		{"claude-desktop", "linux", linux, "/home/me/.config/Claude/claude_desktop_config.json"},
		{"claude-code", "darwin", mac, "/Users/me/.claude.json"},
		{"claude-code", "windows", win, `C:\Users\me\.claude.json`},
		{"cursor", "linux", linux, "/home/me/.cursor/mcp.json"},
		{"cursor", "windows", win, `C:\Users\me\.cursor\mcp.json`},
		{"vscode", "darwin", mac, "/Users/me/Library/Application Support/Code/User/mcp.json"},
		{"vscode", "windows", win, `C:\Users\me\AppData\Roaming\Code\User\mcp.json`},
		{"vscode", "linux", linux, "/home/me/.config/Code/User/mcp.json"},
		{"windsurf", "darwin", mac, "/Users/me/.codeium/windsurf/mcp_config.json"},
		{"windsurf", "windows", win, `C:\Users\me\.codeium\windsurf\mcp_config.json`},
	} {
		c, ok := ClientByID(tt.client)
		if !ok {
			t.Fatalf("no client %s", tt.client)
		}
		if got, err := c.UserPath(tt.goos, tt.dirs); err != nil || got != tt.want {
			t.Errorf("%s on %s: %q, %v; want %q", tt.client, tt.goos, got, err, tt.want)
		}
	}
	c, _ := ClientByID("claude-desktop")
	if _, err := c.UserPath("freebsd", linux); err == nil {
		t.Errorf("Claude Desktop on FreeBSD: no error")
	}
	if _, err := c.UserPath("windows", Dirs{Home: `C:\Users\me`}); err == nil {
		t.Errorf("no APPDATA: no error")
	}
	if len(Clients()) != 5 {
		t.Errorf("%d clients, want 5", len(Clients()))
	}
}
