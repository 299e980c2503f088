package clientconfig

import (
	"slices"
	"testing"
)

func TestLaunchesHub(t *testing.T) {
	for _, tt := range []struct {
		command string
		args    []string
		hubArgs []string
		ok      bool
	}{
		{"/home/me/mcp-hub/bin/mcp-hub", []string{"--config", "x.yaml"}, []string{"--config", "x.yaml"}, true},
		{"mcp-hub", nil, nil, true},
		{`C:\tools\mcp-hub.exe`, []string{"serve"}, []string{"serve"}, true},
		{"npx", []string{"-y", "@mcp-hub/cli", "--data-dir", "/d"}, []string{"--data-dir", "/d"}, true},
		{"cmd", []string{"/c", "npx", "-y", "@mcp-hub/cli@1.2.3"}, []string{}, true},
		{"npx", []string{"-y", "mcp-hub"}, nil, false}, // another project's package
		{"npx", []string{"-y", "@modelcontextprotocol/server-memory"}, nil, false},
		{"/usr/bin/mcp-hubby", nil, nil, false},
	} {
		got, ok := LaunchesHub(tt.command, tt.args)
		if ok != tt.ok || !slices.Equal(got, tt.hubArgs) {
			t.Errorf("LaunchesHub(%q, %q) = %q, %v; want %q, %v", tt.command, tt.args, got, ok, tt.hubArgs, tt.ok)
		}
	}
}
