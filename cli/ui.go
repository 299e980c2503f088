package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/console"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hubstore"
	"github.com/mcp-hub/mcp-hub/oauth"
)

// The web console (package console) is served beside the hub's HTTP front
// by every hub that serves HTTP. mcp-hub ui opens it: in the hub that
// serves HTTP already (it advertises its address in the data dir), or in
// one it starts on a loopback port.

// advertFile is where a hub serving HTTP writes its address, in the data
// dir, for mcp-hub ui.
const advertFile = "http-address"

// advert is the content of advertFile.
type advert struct {
	URL string `json:"url"`
	PID int    `json:"pid"`
}

// httpHandler returns the HTTP server's handler: the hub's front with the
// console beside it under /ui/.
func httpHandler(h *hub.Hub, hopts *hub.HTTPOptions, cfg *config.Config, storePath string, logger *slog.Logger) (http.Handler, *console.Console, error) {
	front, err := h.HTTPFront(hopts)
	if err != nil {
		return nil, nil, err
	}
	con, err := console.New(h, front, &console.Options{Logger: logger, Settings: func() []config.Setting {
		return append([]config.Setting{
			{Key: "(config file)", Value: cfg.InEffect(), Doc: "the config file in effect"},
			{Key: "(store)", Value: storePath, Doc: "the registration store: what mcp-hub add, import and the hub_* tools registered, approvals, tool pins"},
		}, cfg.Settings()...)
	}})
	if err != nil {
		return nil, nil, err
	}
	return con.Beside(front), con, nil
}

// advertise writes the hub's HTTP address into the data dir, and returns
// what removes it (when it is still this hub's).
func advertise(cfg *config.Config, base string, logger *slog.Logger) func() {
	dir, err := hubstore.Dir(cfg.DataDir)
	if err != nil {
		return func() {}
	}
	path := filepath.Join(dir, advertFile)
	b, _ := json.Marshal(advert{URL: base, PID: os.Getpid()})
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		logger.Warn("cannot advertise the HTTP address for mcp-hub ui", "file", path, "err", err)
		return func() {}
	}
	return func() {
		if a, err := readAdvert(path); err == nil && a.PID == os.Getpid() {
			_ = os.Remove(path)
		}
	}
}

func readAdvert(path string) (advert, error) {
	var a advert
	b, err := os.ReadFile(path)
	if err != nil {
		return a, err
	}
	err = json.Unmarshal(b, &a)
	return a, err
}

// UI opens the web console in a browser: the console of the hub that
// serves HTTP already, or of one it starts (until Ctrl-C) on a loopback
// port. The login link it prints works once.
func UI(ctx context.Context, e *Env) int {
	fs := e.flags("[flags]\n\nOpens the web console of the hub that serves HTTP (mcp-hub serve --http, which writes its\n" +
		"address to <data dir>/http-address), or starts one on a loopback port (until Ctrl-C), and\n" +
		"prints a one-time login link, opened in the browser $BROWSER names, else the system's.")
	noBrowser := fs.Bool("no-browser", false, "print the login link without opening a browser")
	fs.String("http", "", "when no hub serves HTTP: serve on this loopback address (default 127.0.0.1:0, a free port)")
	cfg, code, ok := e.parse(fs)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		return e.argCountError(fs.Args(), 0)
	}
	open := func(base, link string) {
		fmt.Fprintf(e.Stdout, "The mcp-hub console is at %s/ui/\n", base)
		if *noBrowser {
			fmt.Fprintf(e.Stdout, "To log in to the mcp-hub console, open this URL in a browser:\n\n%s\n\n", link)
		} else if err := oauth.Browser(e.Stdout, getenvOf(e.Environ))(ctx, "the mcp-hub console", nil, link); err != nil {
			fmt.Fprintf(e.Stdout, "(no browser opened: %v; open the URL yourself)\n", err)
		}
		fmt.Fprintf(e.Stdout, "The link works once, for 5 minutes; run %s ui again for another.\n", e.prog())
	}
	if base, err := runningHub(ctx, cfg); err == nil {
		link, err := mintLink(ctx, cfg, base)
		if err != nil {
			fmt.Fprintf(e.Stderr, "mcp-hub ui: the hub at %s serves HTTP, but: %v\n", base, err)
			return ExitFail
		}
		open(base, link)
		return ExitOK
	}
	// No hub serves HTTP: serve one here, on loopback, until Ctrl-C.
	addr := fs.Lookup("http").Value.String()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if host, _, err := net.SplitHostPort(addr); err != nil || !isLoopbackHost(host) {
		return e.usageError("--http %q: mcp-hub ui serves on a loopback address only (e.g. 127.0.0.1:7411)", addr)
	}
	args := []string{"--http", addr}
	fs.Visit(func(f *pflag.Flag) {
		if f.Name != "http" && f.Name != "no-browser" {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	se := *e
	se.Args = args
	se.httpReady = func(base string, con *console.Console) {
		open(base, con.LoginLink(base))
		fmt.Fprintln(e.Stdout, "This hub serves until you press Ctrl-C.")
	}
	return Serve(ctx, &se)
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// runningHub returns the base URL of a hub of this data dir that serves
// HTTP now: the one it advertised, if it answers /healthz.
func runningHub(ctx context.Context, cfg *config.Config) (string, error) {
	dir, err := hubstore.Dir(cfg.DataDir)
	if err != nil {
		return "", err
	}
	a, err := readAdvert(filepath.Join(dir, advertFile))
	if err != nil {
		return "", err
	}
	if a.PID <= 0 || !processAlive(a.PID) {
		return "", fs.ErrNotExist
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL+"/healthz", nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s/healthz: %s", a.URL, res.Status)
	}
	return a.URL, nil
}

// mintLink asks the hub at base for a one-time console login link, with
// the bearer token of this configuration.
func mintLink(ctx context.Context, cfg *config.Config, base string) (string, error) {
	tok, err := noAuthToken(cfg) // http.token, else <data dir>/http-token; never generated here
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", errors.New("no bearer token to log in with: this configuration has no http.token and the data dir no http-token " +
			"(a hub run with --http-no-auth and no token cannot open its console; give it http.token)")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ui/login-codes", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		Path    string `json:"path"`
		Message string `json:"message"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&out); err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(out.Path, "/ui/") {
		if out.Message != "" {
			return "", fmt.Errorf("it refused a login link: %s", out.Message)
		}
		return "", fmt.Errorf("it refused a login link: %s", res.Status)
	}
	return base + out.Path, nil
}
