package config

import (
	"strings"
	"testing"
)

// TestSettings: every documented key of the configuration shows in
// Settings with its value, and no secret value does: a literal HTTP token
// is masked, a reference to one (${VAR}) is shown as written, and an
// upstream of the file shows what it runs with its secret argument and env
// value masked.
func TestSettings(t *testing.T) {
	const secret = "s3cret-token-value-0123456789"
	for _, tc := range []struct {
		token, want string
	}{
		{secret, "***"},
		{"${HUB_TOKEN}", "${HUB_TOKEN}"},
	} {
		file := writeFile(t, "hub.yaml", `
http:
  listen: 127.0.0.1:7411
  token: "`+tc.token+`"
timeouts:
  call: 90s
mcpServers:
  gh:
    command: npx
    args: ["-y", "server-github", "--api-key=`+secret+`"]
    env: {GITHUB_TOKEN: "`+secret+`"}
`)
		cfg, err := Load(Sources{File: file})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		var all strings.Builder
		for _, s := range cfg.Settings() {
			got[s.Key] = s.Value
			all.WriteString(s.Key + "=" + s.Value + "\n")
		}
		for key, want := range map[string]string{
			"http.listen": "127.0.0.1:7411", "http.token": tc.want, "timeouts.call": "1m30s",
			"catalog.policy": "merge", "admin.approval": "ask", "reconnect.maxAttempts": "5",
		} {
			if got[key] != want {
				t.Errorf("token %q: %s = %q, want %q", tc.token, key, got[key], want)
			}
		}
		if !strings.Contains(got["mcpServers.gh"], "run: npx -y server-github '--api-key=***'") ||
			!strings.Contains(got["mcpServers.gh"], "with environment variables: GITHUB_TOKEN") {
			t.Errorf("mcpServers.gh = %q", got["mcpServers.gh"])
		}
		if strings.Contains(all.String(), secret) {
			t.Errorf("a secret value shows in the settings:\n%s", all.String())
		}
		for _, k := range Keys() {
			if strings.HasPrefix(k.Path, "mcpServers") || k.Kind == KindSection || k.Path == "reconnect" {
				continue
			}
			if _, ok := got[k.Path]; !ok {
				t.Errorf("key %s is not in Settings", k.Path)
			}
		}
	}
}
