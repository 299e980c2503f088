package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestUIOpensTheServingHub: with a hub serving HTTP on the data dir,
// mcp-hub ui mints a one-time link to that hub's console with the bearer
// token (it starts no hub of its own) and exits; the link logs a browser
// in once. When the hub stops, its address leaves the data dir. A hub run
// with --http-no-auth and no token cannot mint one: ui says why.
func TestUIOpensTheServingHub(t *testing.T) {
	data := t.TempDir()
	hubProc, base := startHTTPProc(t, data, "")
	waitFor(t, 10*time.Second, "the advertised address", func() bool {
		b, _ := os.ReadFile(filepath.Join(data, "http-address"))
		return strings.Contains(string(b), `"url":"`+base+`"`)
	})
	cfg := writeFile(t, "none.yaml", "")
	out, code := cliConfig(t, data, cfg, "ui", "--no-browser")
	link := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(base) + `/ui/login\?code=[A-Z0-9]+$`).FindString(out)
	if code != 0 || link == "" || !strings.Contains(out, "The mcp-hub console is at "+base+"/ui/") || strings.Contains(out, "serves until") {
		t.Fatalf("mcp-hub ui: %d\n%s", code, out)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
		res, err := noRedirect.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("the link, use %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
	_ = hubProc.cmd.Process.Signal(os.Interrupt)
	select {
	case <-hubProc.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the hub did not stop")
	}
	if _, err := os.Stat(filepath.Join(data, "http-address")); !os.IsNotExist(err) {
		t.Errorf("the address outlived its hub: %v", err)
	}

	noTok := t.TempDir()
	_, base = startHTTPProc(t, noTok, "", "--http-no-auth")
	waitFor(t, 10*time.Second, "the advertised address", func() bool {
		_, err := os.Stat(filepath.Join(noTok, "http-address"))
		return err == nil
	})
	out, code = cliConfig(t, noTok, cfg, "ui", "--no-browser")
	if code != 1 || !strings.Contains(out, "mcp-hub ui: the hub at "+base+" serves HTTP, but: no bearer token to log in with") {
		t.Errorf("ui with a no-auth hub: %d\n%s", code, out)
	}
}

// TestUIStopsWithALoginAbandoned: a person clicks "Log in" for an OAuth
// upstream in the console and never finishes at the authorization server;
// mcp-hub ui still stops at Ctrl-C (the login waited for its callback for
// minutes, and the console for the login).
func TestUIStopsWithALoginAbandoned(t *testing.T) {
	data := t.TempDir()
	cfg := writeFile(t, "hub.yaml", "mcpServers:\n  secure:\n    url: \""+startOAuthFixture(t, time.Hour).url+"\"\n")
	ui := startUI(t, data, cfg, "BROWSER=true")
	tok := readToken(t, data)
	waitFor(t, 30*time.Second, "secure needs a login", func() bool { return serverState(t, ui.base, tok, "secure") == "NEEDS_LOGIN" })

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(ui.link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("login: %d\n%s", res.StatusCode, page)
	}
	req, _ := http.NewRequest("POST", ui.base+"/ui/servers/secure/login", strings.NewReader("back=%2Fui%2F"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Origin", ui.base)
	req.Header.Set("X-CSRF-Token", string(m[1]))
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		OK       bool   `json:"ok"`
		Redirect string `json:"redirect"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !out.OK || out.Redirect == "" {
		t.Fatalf("the login's answer: %d %+v", res.StatusCode, out)
	}
	// The browser never goes to out.Redirect.

	_ = ui.cmd.Process.Signal(os.Interrupt)
	select {
	case <-ui.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("mcp-hub ui did not stop within 20s of SIGINT with a login abandoned\n%s", ui.err.String())
	}
	if code := ui.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("mcp-hub ui exited %d\n%s", code, ui.err.String())
	}
}
