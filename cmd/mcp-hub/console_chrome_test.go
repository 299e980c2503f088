package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium returns the path of the browser, or skips (fails under make).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "Chromium is not installed (scripts/chromium.sh installs Debian's): the console's browser test cannot run"
	if os.Getenv("MCPHUB_TEST_BROWSER") == "required" {
		t.Fatal(msg)
	}
	fmt.Fprintln(os.Stderr, "SKIP "+t.Name()+": "+msg)
	t.Skip(msg)
	return ""
}

// chrome is one headless Chromium tab.
type chrome struct {
	t     *testing.T
	ctx   context.Context
	shots string // where screenshots go
	base  string // the console's origin
	seen  strings.Builder
}

func newChrome(t *testing.T, base string) *chrome {
	t.Helper()
	exe := chromium(t)
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancel()
	})
	shots := t.TempDir()
	if d := os.Getenv("MCPHUB_SCREENSHOTS"); d != "" {
		shots = d
	}
	c := &chrome{t: t, ctx: ctx, shots: shots, base: base}
	// The first action starts the browser, which lives as long as the
	// context it runs with: this one, not one with a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return c
}

func (c *chrome) do(steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		c.t.Fatalf("browser: %v", err)
	}
}

// click clicks the element with the id. A live update may replace the
// element between chromedp finding it and clicking it ("Could not find node
// with given id"); the click is then tried again on the new element.
func (c *chrome) click(id string) {
	c.t.Helper()
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.ID(id)))
		cancel()
		if err == nil {
			return
		}
		if try == 5 || !strings.Contains(err.Error(), "Could not find node") {
			c.t.Fatalf("browser: click #%s: %v", id, err)
		}
	}
}

// eval evaluates a JavaScript expression and returns its string value.
func (c *chrome) eval(expr string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		c.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// wait waits until the JavaScript predicate holds in the page. It asks
// from here, not with a poller in the page: that needs the page's timers,
// which do not run with JavaScript off, and a navigation (a form's post,
// a redirect) ends it. Errors (the page being replaced, an element not
// there yet) count as "not yet"; the last is reported if it never holds.
func (c *chrome) wait(what, predicate string) {
	c.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(c.ctx, 15*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+predicate+")"))
		cancel()
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			body, _ := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			c.t.Fatalf("waiting for %s (%s): not within 45s (last error: %v)\npage:\n%s", what, predicate, err, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Logf("ok: %s", what)
	c.record()
}

// open navigates to a console page and records its DOM.
func (c *chrome) open(path string) {
	c.t.Helper()
	c.do(chromedp.Navigate(c.base + path))
	shown, _, _ := strings.Cut(path, "?code=") // a login code stays out of the log
	c.wait("the page "+shown, `document.readyState === "complete"`)
}

// record keeps the page's DOM, for the search for secret values.
func (c *chrome) record() {
	c.t.Helper()
	dom, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err == nil {
		c.seen.WriteString(dom)
	}
}

// shot writes a screenshot of the page (PNG) to the screenshot dir.
func (c *chrome) shot(name string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		c.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(c.shots, "console-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.t.Logf("screenshot: %s", path)
}

// js quotes s as a JavaScript string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
