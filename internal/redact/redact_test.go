package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"--token": true, "--access-token": true, "--github-token": true, "-token": true, "--auth-token": true,
		"--api-key": true, "--apikey": true, "--api_key": true, "--key": true, "--secret-key": true, "--private-key": true,
		"--password": true, "--passwd": true, "--db-password": true, "--pass": true, "--passphrase": true,
		"--secret": true, "--client-secret": true, "--auth": true, "--basic-auth": true, "--credentials": true,
		"GITHUB_TOKEN": true, "GITHUB_PERSONAL_ACCESS_TOKEN": true, "OPENAI_API_KEY": true,
		"AWS_SECRET_ACCESS_KEY": true, "client_secret": true, "password": true, "GITHUB_PAT": true,
		"--sort-key": false, "--ssh-key": false, "--max-tokens": false, "--token-file": false, "--no-auth": false,
		"--keyfile": false, "--bypass": false, "--oauth": false, "AWS_ACCESS_KEY_ID": false, "-p": false,
		"--port": false, "--verbose": false, "": false, "--": false,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestArgv(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"equals form", []string{"npx", "-y", "srv", "--api-key=S1"}, []string{"npx", "-y", "srv", "--api-key=***"}},
		{"separate form", []string{"srv", "--token", "S1", "--port", "80"}, []string{"srv", "--token", "***", "--port", "80"}},
		{"Go-style single dash", []string{"srv", "-token", "S1", "-client-secret=S2"}, []string{"srv", "-token", "***", "-client-secret=***"}},
		{"every spelling", []string{"srv", "--apikey", "a", "--access-token", "b", "--client-secret", "c", "--passwd", "d", "--secret", "e", "--auth", "f", "--key", "g", "--password=h"},
			[]string{"srv", "--apikey", "***", "--access-token", "***", "--client-secret", "***", "--passwd", "***", "--secret", "***", "--auth", "***", "--key", "***", "--password=***"}},
		{"flag at the end", []string{"srv", "--token"}, []string{"srv", "--token"}},
		{"no value: a flag follows", []string{"mysql", "--password", "--host", "h"}, []string{"mysql", "--password", "--host", "h"}},
		{"not secret-looking", []string{"srv", "--sort-key", "name", "--max-tokens", "100", "--no-auth", "x.js"}, []string{"srv", "--sort-key", "name", "--max-tokens", "100", "--no-auth", "x.js"}},
		{"references kept", []string{"srv", "--token=${TOKEN}", "--key", "file:/run/k"}, []string{"srv", "--token=${TOKEN}", "--key", "file:/run/k"}},
		{"empty value", []string{"srv", "--token="}, []string{"srv", "--token="}},
		{"node -p is code", []string{"node", "-p", "process.env.HOME", "-e", "x()"}, []string{"node", "-p", "process.env.HOME", "-e", "x()"}},
		{"python -p", []string{"/usr/bin/python3.12", "-p", "x"}, []string{"/usr/bin/python3.12", "-p", "x"}},
		{"npx -p is a package", []string{"npx", "-p", "@scope/pkg", "cmd"}, []string{"npx", "-p", "@scope/pkg", "cmd"}},
		{"docker -p is a port", []string{"docker", "run", "-p", "8080:80", "-e", "GITHUB_TOKEN=S1", "img"}, []string{"docker", "run", "-p", "8080:80", "-e", "GITHUB_TOKEN=***", "img"}},
		{"mysql -p VALUE", []string{"mysql", "-u", "root", "-p", "S1"}, []string{"mysql", "-u", "root", "-p", "***"}},
		{"mysql -pVALUE", []string{"/usr/bin/mysql", "-pS1", "db"}, []string{"/usr/bin/mysql", "-p***", "db"}},
		{"mysqldump.exe -pVALUE", []string{`C:\bin\mysqldump.exe`, "-pS1"}, []string{`C:\bin\mysqldump.exe`, "-p***"}},
		{"other -p VALUE", []string{"srv", "-p", "S1"}, []string{"srv", "-p", "***"}},
		{"-p=VALUE", []string{"srv", "-p=S1"}, []string{"srv", "-p=***"}},
		{"node -p=code", []string{"node", "-p=1+1"}, []string{"node", "-p=1+1"}},
		{"other -pVALUE is not mysql's", []string{"srv", "-port", "8080"}, []string{"srv", "-port", "8080"}},
		{"URL userinfo", []string{"srv", "postgres://admin:S1@db:5432/x"}, []string{"srv", "postgres://admin:***@db:5432/x"}},
		{"URL in a flag value", []string{"srv", "--url=https://h/x?key=S1&v=2"}, []string{"srv", "--url=https://h/x?key=***&v=***"}},
		{"URL after a flag", []string{"srv", "--url", "https://h/x?key=S1"}, []string{"srv", "--url", "https://h/x?key=***"}},
		{"NAME=VALUE", []string{"env", "OPENAI_API_KEY=S1", "AWS_ACCESS_KEY_ID=AKIA1", "DEBUG=1", "srv"}, []string{"env", "OPENAI_API_KEY=***", "AWS_ACCESS_KEY_ID=AKIA1", "DEBUG=1", "srv"}},
		{"NAME=VALUE as a flag value", []string{"docker", "--env=SLACK_BOT_TOKEN=S1"}, []string{"docker", "--env=SLACK_BOT_TOKEN=***"}},
		{"--header", []string{"mcp-remote", "https://h/mcp", "--header", "Authorization: Bearer S1"}, []string{"mcp-remote", "https://h/mcp", "--header", "Authorization: ***"}},
		{"--header=", []string{"srv", "--header=X-Key:S1"}, []string{"srv", "--header=X-Key:***"}},
		{"--header without a colon", []string{"srv", "--header", "S1"}, []string{"srv", "--header", "***"}},
		{"--header reference", []string{"srv", "--header", "Authorization:${AUTH}"}, []string{"srv", "--header", "Authorization:${AUTH}"}},
		{"-H", []string{"curl", "-H", "X-Key: S1"}, []string{"curl", "-H", "X-Key: ***"}},
		{"-H without a colon", []string{"srv", "-H", "localhost"}, []string{"srv", "-H", "localhost"}},
		{"after --", []string{"srv", "--", "--token", "S1"}, []string{"srv", "--", "--token", "***"}},
		{"command only", []string{"srv"}, []string{"srv"}},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := Argv(in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Argv(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("Argv changed its argument: %q", in)
			}
			if r := (&Masker{Reveal: true}).Argv(in); !slices.Equal(r, tt.in) {
				t.Errorf("Reveal changed %q to %q", tt.in, r)
			}
		})
	}
}

func TestURL(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                       "",
		"https://h/mcp":                          "https://h/mcp",
		"https://h/mcp?k=v":                      "https://h/mcp?k=***",
		"https://h/mcp?k=%24%7BX%7D&j=2#frag":    "https://h/mcp?k=%24%7BX%7D&j=***#frag",
		"https://h/mcp?k=${X}&empty=&bare":       "https://h/mcp?k=${X}&empty=&bare",
		"https://h/sse?token=Bearer%20${T}&a=b&": "https://h/sse?token=Bearer%20${T}&a=***&",
		"https://u:p4ss@h:8443/x?q=1":            "https://u:***@h:8443/x?q=***",
		"https://ghp_tok@github.com/o/r":         "https://***@github.com/o/r",
		"https://h/cb#access_token=S&x=1":        "https://h/cb#access_token=***&x=***",
		"http://h/p@x?a":                         "http://h/p@x?a",
		"h/x?key=S":                              "h/x?key=***",
		"not a url":                              "not a url",
	} {
		if got := URL(raw); got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestIsReference(t *testing.T) {
	for v, want := range map[string]bool{
		"${TOKEN}":              true,
		"Bearer ${TOKEN}":       true,
		"bearer ${TOKEN}":       true,
		"Basic ${USER_PASS}":    true,
		"${A}${B}":              true,
		"file:/run/secrets/tok": true,
		"plain":                 false,
		"":                      false,
		"Bearer abc":            false,
		"abc${TOKEN}":           false,
		"${TOKEN} trailing":     false,
		"${UNTERMINATED":        false,
		"Bearer ${A} ${":        false,
	} {
		if got := IsReference(v); got != want {
			t.Errorf("IsReference(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestValue(t *testing.T) {
	for v, want := range map[string]string{
		"s3cret": "***", "": "", "${TOKEN}": "${TOKEN}", "Bearer ${TOKEN}": "Bearer ${TOKEN}",
		"file:/run/secrets/x": "file:/run/secrets/x", "Bearer abc": "***", "abc${TOKEN}": "***",
	} {
		if got := Value(v); got != want {
			t.Errorf("Value(%q) = %q, want %q", v, got, want)
		}
	}
	m := &Masker{}
	got := m.Values(map[string]string{"A": "x", "B": "${B}", "C": ""})
	if got["A"] != Mask || got["B"] != "${B}" || got["C"] != "" || m.Masked != 1 {
		t.Errorf("Values = %v, masked %d", got, m.Masked)
	}
	if m.Values(nil) != nil {
		t.Error("Values(nil) is not nil")
	}
}

func TestText(t *testing.T) {
	ue := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/mcp?key=S1", Err: errors.New("connection refused")}
	for in, want := range map[string]string{
		ue.Error(): `Post "http://127.0.0.1:1/mcp?key=***": connection refused`,
		"POST http://h:1/mcp?key=S1 (status: 503)":      "POST http://h:1/mcp?key=*** (status: 503)",
		"exec: npx --api-key=S1 failed":                 "exec: npx --api-key=*** failed",
		"env GITHUB_TOKEN=S1 DEBUG=1":                   "env GITHUB_TOKEN=*** DEBUG=1",
		`{"args":["--token=S1"]}`:                       `{"args":["--token=***"]}`,
		"Authorization: Bearer abcdefgh12":              "Authorization: Bearer ***",
		"bearer tokens are short":                       "bearer tokens are short",
		"connect postgres://u:S1@db/x: refused":         "connect postgres://u:***@db/x: refused",
		"max_tokens=100 bytes=123 key_id=7":             "max_tokens=100 bytes=123 key_id=7",
		"plain text: nothing to see":                    "plain text: nothing to see",
		"x-token=S1 and 1token=S2":                      "x-token=*** and 1token=S2",
		"value ${TOKEN}: token=${TOKEN} stays a source": "value ${TOKEN}: token=${TOKEN} stays a source",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestSecrets(t *testing.T) {
	got := Secrets([]string{"mysql", "-pS1", "--token", "S2", "--header", "X: S3", "postgres://u:S4@h", "--key=${K}"}, "https://h/mcp?key=a%2Fb&x=S5")
	want := []string{"S1", "S2", "S3", "S4", "a/b", "a%2Fb", "S5"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Secrets = %q, want %q", got, want)
	}
}

func TestScrubber(t *testing.T) {
	s := NewScrubber("ab", "abc", "info", "8080", "12345678", "p4ssword-long", "Bearer tok-12345678", "")
	for in, want := range map[string]string{
		"ab abc about":                    "ab abc about",          // 1–3 bytes: never
		"level=info information":          "level=*** information", // 4–7: whole words only
		"info":                            "***",
		"listening on :8080":              "listening on :8080", // short and only digits
		"id 12345678 x12345678y":          "id *** x***y",       // 8 or more: everywhere
		"pw=p4ssword-long.":               "pw=***.",
		"got tok-12345678 back":           "got *** back", // the token of "Bearer …" too
		"header Bearer tok-12345678 sent": "header *** sent",
	} {
		if got := s.Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
	// Longest first: a value inside a longer one does not split it.
	s.Set("abcd", "xxabcdxx")
	if got := s.Scrub("xxabcdxx abcd"); got != "*** ***" {
		t.Errorf("overlapping values: %q", got)
	}
	s.Set()
	if got := s.Scrub("abcd"); got != "abcd" {
		t.Errorf("after Set(): %q", got)
	}
	var none *Scrubber
	if got := none.Scrub("abcd"); got != "abcd" {
		t.Errorf("nil Scrubber: %q", got)
	}
}

// stringer is a fmt.Stringer whose text holds a URL.
type stringer string

func (s stringer) String() string { return string(s) }

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	s := NewScrubber("planted-env-value")
	l := slog.New(NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), s))
	l = l.With("base", "https://h/?key=S1")
	l.Debug("retrying request", "request", "POST http://h/mcp?key=S2 (status: 503)")
	l.Warn("not JSON-RPC", "line", "env X=planted-env-value")
	l.Error("failed", "err", &url.Error{Op: "Post", URL: "http://h/?token=S3", Err: errors.New("refused")},
		"url", &url.URL{Scheme: "http", Host: "h", RawQuery: "key=S4"}, "desc", stringer("GET http://u:S5@h/"),
		slog.Group("g", "arg", "--api-key=S6"), "n", 3, "nilerr", error(nil))
	l.WithGroup("grp").Info("message with http://h/?key=S7", "k", "v")
	var typedNil *url.Error
	l.Info("typed nil", "err", error(typedNil))
	out := buf.String()
	for _, secret := range []string{"S1", "S2", "S3", "S4", "S5", "S6", "S7", "planted-env-value"} {
		if strings.Contains(out, secret) {
			t.Errorf("log shows %s:\n%s", secret, out)
		}
	}
	for _, want := range []string{"key=***", "line=\"env X=***\"", `g.arg="--api-key=***"`, "n=3", "grp.k=v", "!PANIC"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestCut(t *testing.T) {
	long := "L-" + strings.Repeat("0123456789", 100) // longer than CutSlack
	s := NewScrubber("secret-value-1234", long)
	tests := []struct {
		name string
		text string
		n    int
		more bool
		want string
		cut  bool
	}{
		{"short, whole", "x secret-value-1234 y", 100, false, "x *** y", false},
		{"a value across the cut is masked whole", strings.Repeat("a", 10) + "secret-value-1234 tail", 15, false, strings.Repeat("a", 10) + "*** t", true},
		{"the start of a value at the cut", "ab secret-val", 100, true, "ab ***", true},
		{"the start of a long value cut by the caller", "line " + long[:300], 100, true, "line ***", true},
		{"masks by Text, then cuts", "GET http://h/?key=abcdefgh rest", 21, false, "GET http://h/?key=***", true},
		{"at a character boundary", "ééé", 3, false, "é", true},
		{"nothing at the cut", "plain text here", 5, false, "plain", true},
		{"a value's start shorter than MinScrubLen stays", "abc sec", 100, true, "abc sec", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := Cut(s, tt.text, tt.n, tt.more)
			if got != tt.want || cut != tt.cut {
				t.Errorf("Cut(%q, %d, %v) = %q, %v; want %q, %v", tt.text, tt.n, tt.more, got, cut, tt.want, tt.cut)
			}
		})
	}
	if got, _ := Cut(nil, "abc", 2, false); got != "ab" {
		t.Errorf("nil Scrubber: %q", got)
	}
}
