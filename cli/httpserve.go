package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hubstore"
)

// tokenFile is where a generated HTTP token lives, in the data dir.
const tokenFile = "http-token"

// httpSetup checks the HTTP settings and returns the listener and the front's
// options. A non-loopback address needs http.allowRemote and a token; no-auth
// is for loopback only. approve is the command that approves in this
// hub's store ([Env.approveCommand]).
func httpSetup(cfg *config.Config, stderr io.Writer, logger *slog.Logger, approve string) (net.Listener, *hub.HTTPOptions, error) {
	host, _, err := net.SplitHostPort(cfg.HTTPListen)
	if err != nil {
		return nil, nil, fmt.Errorf("http.listen %q: want host:port, e.g. 127.0.0.1:7411", cfg.HTTPListen)
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil {
		loopback = ip.IsLoopback()
	}
	if !loopback && !cfg.HTTPAllowRemote {
		return nil, nil, fmt.Errorf("http.listen %q is not a loopback address: any machine that reaches it could use your MCP servers; "+
			"bind 127.0.0.1, or pass --http-allow-remote (with a token) if you mean it", cfg.HTTPListen)
	}
	if cfg.HTTPNoAuth && !loopback {
		return nil, nil, fmt.Errorf("--http-no-auth is only allowed on a loopback address (http.listen is %q)", cfg.HTTPListen)
	}
	opts := &hub.HTTPOptions{
		NoAuth:             cfg.HTTPNoAuth,
		AllowedHosts:       cfg.HTTPAllowedHosts,
		AllowedOrigins:     cfg.HTTPAllowedOrigins,
		MaxSessions:        cfg.HTTPMaxSessions,
		SessionIdleTimeout: cfg.HTTPSessionIdle,
		MaxBodyBytes:       int64(cfg.HTTPMaxBodyBytes),
		BodyTimeout:        cfg.HTTPBodyTimeout,
	}
	if !loopback && host != "" && host != "0.0.0.0" && host != "::" {
		opts.AllowedHosts = append(opts.AllowedHosts, host)
	}
	// Bound first: a hub that cannot serve (a busy port) says so before it
	// generates, stores or prints a token, or warns about a front it never
	// opens.
	ln, err := net.Listen("tcp", cfg.HTTPListen)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", cfg.HTTPListen, err)
	}
	fail := func(err error) (net.Listener, *hub.HTTPOptions, error) {
		ln.Close()
		return nil, nil, err
	}
	if cfg.AuthEnabled() {
		// An identity provider's tokens instead of the static token.
		opts.Auth = &hub.AuthOptions{Issuer: cfg.AuthIssuer, Audience: cfg.AuthAudience, JWKSURL: cfg.AuthJWKSURL,
			RequiredScopes: cfg.AuthRequiredScopes, AdminScope: cfg.AuthAdminScope}
		logger.Info("HTTP clients authenticate with access tokens of the identity provider", "issuer", cfg.AuthIssuer, "audience", cfg.AuthAudience)
	} else if cfg.HTTPNoAuth {
		// No-auth covers MCP clients, not approval: approving over the
		// REST API still needs a token, and without one it is refused.
		if opts.Token, err = noAuthToken(cfg); err != nil {
			return fail(err)
		}
		approval := "approving over the REST API still needs the bearer token"
		if opts.Token == "" {
			approval = "approving over the REST API is off (no token configured): approve with " + approve + " NAME"
		}
		logger.Warn("HTTP authentication is OFF (--http-no-auth): any local process can use the hub; Host and Origin checks stay on; " + approval)
	} else {
		if opts.Token, err = httpToken(cfg, stderr); err != nil {
			return fail(err)
		}
	}
	return ln, opts, nil
}

// httpToken returns the configured token, or the one in <data dir>/http-token,
// generating it (256 bits, file mode 0600) and printing it once on first use.
func httpToken(cfg *config.Config, stderr io.Writer) (string, error) {
	if cfg.HTTPToken != "" {
		tok, err := cfg.HTTPToken.Resolve(os.LookupEnv)
		if err != nil {
			return "", fmt.Errorf("http.token: %w", err)
		}
		if len(tok) < 16 {
			return "", errors.New("http.token: use at least 16 characters")
		}
		return tok, nil
	}
	path, err := tokenPath(cfg)
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(path)
	b, err := os.ReadFile(path)
	if err == nil {
		if tok := strings.TrimSpace(string(b)); tok != "" {
			return tok, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another hub won the race
		return httpToken(cfg, stderr)
	}
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	fmt.Fprintf(stderr, "mcp-hub: generated the HTTP bearer token (kept in %s, mode 0600):\n\n    %s\n\nClients send it as: Authorization: Bearer <token>\n\n", path, tok)
	return tok, nil
}

// tokenPath is <data dir>/http-token.
func tokenPath(cfg *config.Config) (string, error) {
	dir, err := hubstore.Dir(cfg.DataDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, tokenFile), nil
}

// noAuthToken is the token approval over the REST API needs with
// --http-no-auth: http.token, else the one in <data dir>/http-token when a
// hub generated it before; "" when there is none (none is generated).
func noAuthToken(cfg *config.Config) (string, error) {
	if cfg.HTTPToken != "" {
		return httpToken(cfg, io.Discard)
	}
	path, err := tokenPath(cfg)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// serveHTTP runs the HTTP server until ctx ends, then shuts it down.
func serveHTTP(ctx context.Context, ln net.Listener, handler http.Handler, readHeader time.Duration, logger *slog.Logger) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeader,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	<-errc
	return nil
}
