package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/testbin"
)

// TestUI runs mcp-hub ui in-process. With no hub serving HTTP on the data
// dir it serves one on a loopback port until its context ends, prints the
// console's address and a one-time login link, and opens the link with
// the $BROWSER of its environment (this test binary), which it logs in;
// the link then works no more. A second ui, while that hub serves, asks it
// for a link with the data dir's bearer token and exits without serving
// (--no-browser: the link is only printed; it logs a browser in once).
// When the first ui's context ends it returns 0 and the hub's address
// leaves the data dir. A non-loopback --http is refused.
func TestUI(t *testing.T) {
	s := newSetup(t, "")
	visited := filepath.Join(t.TempDir(), "visited")
	s.environ = []string{"BROWSER=" + browserCommand(t, visited)}
	out := &testbin.Buffer{}
	s.stdout = out
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.ctx = ctx
	done := make(chan outcome, 1)
	go func() { done <- s.run(t, UI, "ui") }()

	serving := regexp.MustCompile(`The mcp-hub console is at (http://127\.0\.0\.1:\d+)/ui/\n(?s:.*)This hub serves until you press Ctrl-C\.\n`)
	var m []string
	for deadline := time.Now().Add(60 * time.Second); m == nil; time.Sleep(20 * time.Millisecond) {
		select {
		case o := <-done:
			t.Fatalf("ui returned before it served: %s", o)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("ui did not serve:\n%s", out.String())
		}
		m = serving.FindStringSubmatch(out.String())
	}
	base := m[1]
	link := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(base) + `/ui/login\?code=[A-Z0-9]+$`).FindString(out.String())
	if link == "" {
		t.Fatalf("ui printed no login link:\n%s", out.String())
	}
	if b, err := os.ReadFile(visited); err != nil || string(b) != "200 "+base+"/ui/\n" {
		t.Errorf("the browser $BROWSER named ended on %q (%v), want the console's first page", b, err)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) int {
		t.Helper()
		res, err := noRedirect.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := get(link); code != http.StatusUnauthorized {
		t.Errorf("the link after the browser used it: %d, want 401", code)
	}

	// A second ui finds the hub the first one serves.
	second := *s
	second.stdout, second.ctx = nil, nil
	o := second.run(t, UI, "ui", "--no-browser")
	link = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(base) + `/ui/login\?code=[A-Z0-9]+$`).FindString(o.stdout)
	if o.code != ExitOK || link == "" || !strings.Contains(o.stdout, "The mcp-hub console is at "+base+"/ui/\n") || strings.Contains(o.stdout, "serves until") {
		t.Fatalf("ui beside a serving hub: %s", o)
	}
	for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
		if code := get(link); code != want {
			t.Errorf("the second link, use %d: %d, want %d", i+1, code, want)
		}
	}

	cancel()
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ui did not return after its context ended")
	}
	if o.code != ExitOK {
		t.Errorf("ui: %s", o)
	}
	if _, err := os.Stat(filepath.Join(s.data, advertFile)); !os.IsNotExist(err) {
		t.Errorf("the address outlived its hub: %v", err)
	}

	if o := second.run(t, UI, "ui", "--http", "0.0.0.0:0"); o.code != ExitConfig || !strings.HasPrefix(o.stderr, `mcp-hub ui: --http "0.0.0.0:0": mcp-hub ui serves on a loopback address only`) {
		t.Errorf("ui --http on a non-loopback address: %s", o)
	}
}
