package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hubstore"
)

// addrInUse reports whether err is a listen that found its address taken.
func addrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use") ||
		strings.Contains(err.Error(), "Only one usage of each socket address") // Windows
}

// whoListens says who may be listening on addr, which serve found taken,
// and what to do: a hub of this data dir (it advertised the address), a
// hub of another (it answers as one), or another program, with how to
// check.
func (e *Env) whoListens(ctx context.Context, cfg *config.Config, addr string) string {
	if dir, err := hubstore.Dir(cfg.DataDir); err == nil {
		if a, err := readAdvert(filepath.Join(dir, advertFile)); err == nil && a.PID > 0 && processAlive(a.PID) && sameAddr(a.URL, addr) {
			return fmt.Sprintf("an mcp-hub serves there already (pid %d, on this data directory): connect to it (%s ui opens its console), or stop it first", a.PID, e.prog())
		}
	}
	host, port, _ := net.SplitHostPort(addr)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, port)
	if answersAsHub(ctx, base) {
		return fmt.Sprintf("an mcp-hub serves there already (%s/healthz answers, as a hub's does): connect to it, stop it, or serve on another port (--http %s)", base, net.JoinHostPort(host, nextPort(port)))
	}
	return fmt.Sprintf("another program listens there; a hub may already serve there: curl %s/healthz answers \"ok\" if one does, and ss -ltnp 'sport = :%s' (lsof -i :%s on macOS) names the program. Stop it, or serve on another port (--http %s)",
		base, port, port, net.JoinHostPort(host, nextPort(port)))
}

// sameAddr reports whether the base URL u serves on addr.
func sameAddr(u, addr string) bool {
	return strings.TrimPrefix(u, "http://") == addr
}

// nextPort is the port after port, for a suggestion.
func nextPort(port string) string {
	var n int
	if _, err := fmt.Sscan(port, &n); err != nil || n <= 0 || n >= 65535 {
		return "7412"
	}
	return fmt.Sprint(n + 1)
}

// answersAsHub reports whether an mcp-hub answers at base: /healthz says
// "ok" and /mcp asks for the hub's bearer token.
func answersAsHub(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	get := func(path string) (*http.Response, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return nil, "", err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
		return res, string(b), nil
	}
	res, body, err := get("/healthz")
	if err != nil || res.StatusCode != http.StatusOK || strings.TrimSpace(body) != "ok" {
		return false
	}
	res, _, err = get("/mcp")
	return err == nil && strings.Contains(res.Header.Get("WWW-Authenticate"), `realm="mcp-hub"`)
}
