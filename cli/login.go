package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/oauth"
	"github.com/mcp-hub/mcp-hub/persist"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// mcp-hub login and logout (issue 13). The flows live in package oauth;
// these are their command lines, and the wiring of OAuth into the hub.

const loginUse = `NAME [flags]

Logs in to the sse or http upstream NAME with OAuth: connects to it the way
the hub does, prints the authorization URL on a line of its own and opens it
with $BROWSER when set, else the system's browser (never required: open the
URL by hand), waits for the redirect on 127.0.0.1, and stores the token. A
running hub picks it up within seconds.

With --token, stores a token you paste instead (servers that issue personal
access tokens): it is read from stdin, never from the command line.`

// Login logs in to an HTTP upstream with OAuth, or stores a pasted token.
func Login(ctx context.Context, e *Env) int {
	var pasted *bool
	var timeout *time.Duration
	define := func(fs *pflag.FlagSet) {
		pasted = fs.Bool("token", false, "store a token read from stdin instead of logging in")
		timeout = fs.Duration("timeout", 5*time.Minute, "how long to wait for the browser's redirect")
	}
	return withStore(ctx, e, loginUse, 1, 1, define, func(st *persist.Store, cfg *config.Config, args []string) int {
		spec, err := loginSpec(ctx, cfg, st, args[0])
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub login:", e.ours(err.Error()))
			return ExitFail
		}
		if *pasted {
			tok, err := readToken(e)
			if err == nil {
				err = oauth.PasteToken(ctx, st, spec, tok)
			}
			if err != nil {
				fmt.Fprintln(e.Stderr, "mcp-hub login:", err)
				return ExitFail
			}
			audit(ctx, st, "login", spec.Name, map[string]any{"method": "pasted token"})
			fmt.Fprintf(e.Stdout, "Stored the token for %q. A running hub picks it up within seconds.\n", spec.Name)
			return ExitOK
		}
		status, err := oauth.Login(ctx, spec, oauth.LoginOptions{Store: st, Interact: oauth.Browser(e.Stdout, getenvOf(e.Environ)),
			Logger: probeLogger(e.Stderr, cfg), LookupEnv: lookupOf(e.Environ), Timeout: *timeout,
			ClientName: "mcp-hub", ClientVersion: e.Build.version()})
		if err != nil {
			fmt.Fprintf(e.Stderr, "mcp-hub login: %s: %v\n", spec.Name, err)
			return ExitFail
		}
		audit(ctx, st, "login", spec.Name, map[string]any{"server": status.Server, "scopes": status.Scopes})
		fmt.Fprintf(e.Stdout, "Logged in to %q: %s. A running hub picks it up within seconds.\n", spec.Name, status)
		return ExitOK
	})
}

// Logout deletes an upstream's OAuth token and revokes it where the server
// supports that.
func Logout(ctx context.Context, e *Env) int {
	return withStore(ctx, e, "NAME [flags]", 1, 1, nil, func(st *persist.Store, _ *config.Config, args []string) int {
		name := args[0]
		revoked, err := oauth.Logout(ctx, st, name, nil)
		if errors.Is(err, oauth.ErrNotLoggedIn) {
			fmt.Fprintf(e.Stdout, "%q is not logged in.\n", name)
			return ExitOK
		}
		audit(ctx, st, "logout", name, map[string]any{"revoked": revoked})
		if err != nil {
			fmt.Fprintln(e.Stderr, "mcp-hub logout:", err)
			return ExitFail
		}
		how := "its authorization server offers no revocation"
		if revoked {
			how = "revoked at its authorization server"
		}
		fmt.Fprintf(e.Stdout, "Logged out of %q: the token was deleted (%s). A running hub stops using it at its next refresh or restart.\n", name, how)
		return ExitOK
	})
}

// loginSpec finds the upstream to log in to: the config file's, else an
// approved registration's.
func loginSpec(ctx context.Context, cfg *config.Config, st *persist.Store, name string) (upstream.Spec, error) {
	for _, s := range cfg.Servers {
		if s.Spec.Name == name {
			return s.Spec, nil
		}
	}
	r, err := st.Get(ctx, name)
	if err != nil {
		return upstream.Spec{}, err
	}
	if !r.Approved() {
		return upstream.Spec{}, fmt.Errorf("%q is not approved (%s): review it with mcp-hub approve %s first", name, r.ApprovalState(), name)
	}
	return r.Spec, nil
}

// readToken reads a pasted token from stdin (without echo on a terminal).
func readToken(e *Env) (string, error) {
	if f, ok := e.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(e.Stderr, "Paste the token and press Enter: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.Stderr)
		return string(b), err
	}
	line, err := bufio.NewReader(io.LimitReader(e.Stdin, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return line, nil
}

func getenvOf(environ []string) func(string) string {
	return func(k string) string {
		v, _ := lookupOf(environ)(k)
		return v
	}
}

func lookupOf(environ []string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for _, kv := range environ {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v, true
			}
		}
		return "", false
	}
}

// withOAuth gives the hub's HTTP upstreams their OAuth client, with tokens
// in st, and lets clients log in through URL elicitation. The caller sets
// the hub's interaction (SetInteract) once the hub exists.
func withOAuth(o *hub.Options, st *persist.Store, logger *slog.Logger, environ []string, clientVersion string) *oauth.Authenticator {
	a := oauth.New(oauth.Options{Store: st, Logger: logger, LookupEnv: lookupOf(environ)})
	o.Upstream.Auth = a
	o.Login = func(ctx context.Context, spec upstream.Spec, interact func(context.Context, string, any, string) error) (upstream.AuthStatus, error) {
		return oauth.Login(ctx, spec, oauth.LoginOptions{Store: st, Interact: interact, Logger: logger, LookupEnv: lookupOf(environ),
			ClientName: "mcp-hub", ClientVersion: clientVersion})
	}
	return a
}

// loginWords is the LOGIN column of list and status: the stored token's
// state in words, or what to do about a reported NEEDS_LOGIN.
func loginWords(tokens map[string]upstream.Token, name string, state upstream.State) string {
	if state == upstream.StateNeedsLogin {
		return "needs login: mcp-hub login " + name
	}
	if t, ok := tokens[name]; ok {
		return t.Status().String()
	}
	return "-"
}
