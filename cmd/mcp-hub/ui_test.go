package main

import (
	"net/http"
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
