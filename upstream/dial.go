package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultProtocolVersion is the protocol version the hub asks upstreams for
// unless a spec pins another: the newest. go-sdk probes with
// server/discover (the stateless era's handshake, which the streamable
// HTTP link sends with the MCP-Protocol-Version header it needs) and falls
// back to initialize (the session era's) when the server does not speak
// it. A legacy SSE upstream (HTTP+SSE, 2024-11-05) is asked for the newest
// session-era version directly.
const DefaultProtocolVersion = era.Stateless

// dial connects to an upstream and performs the handshake. It returns a
// live Conn or an error that says what went wrong in terms a person can act
// on (the process exited, initialize timed out, …).
func (u *Upstream) dial(ctx context.Context, spec *Spec) (*Conn, error) {
	return u.dialWith(ctx, spec, false)
}

// dialWith is dial; standardHeaders puts the stateless era's standard
// headers on a session-era HTTP connection's POSTs too (httpOptions).
func (u *Upstream) dialWith(ctx context.Context, spec *Spec, standardHeaders bool) (*Conn, error) {
	m := u.m
	c := newConn(spec.Name, u.logger, u)
	c.secret = u.secret
	c.owner = u.owner
	lookup := m.opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	switch spec.Transport {
	case TransportStdio:
		env, err := resolveMap("env", spec.Env, lookup)
		if err != nil {
			return nil, err
		}
		u.secret.Set(spec.secretValues(env)...)
		environ := os.Environ()
		if m.opts.Environ != nil {
			environ = m.opts.Environ()
		}
		_, err = startStdio(spec, stdioOptions{
			Env:             childEnv(environ, m.opts.InheritEnv, env),
			MaxMessageBytes: m.opts.MaxMessageBytes,
			Grace:           m.opts.ShutdownGrace,
			Stderr:          u.stderr,
			Logger:          u.logger,
			Groups:          m.opts.ProcessGroups,
		}, c)
		if err != nil {
			return nil, err
		}
	case TransportHTTP, TransportSSE:
		headers, err := resolveMap("header", spec.Headers, lookup)
		if err != nil {
			return nil, err
		}
		secrets := spec.secretValues(headers)
		ac := u.authClient(spec)
		var wrap func(http.RoundTripper) http.RoundTripper
		if ac != nil {
			secrets = append(secrets, ac.Secrets()...)
			wrap = func(rt http.RoundTripper) http.RoundTripper { return ac.Transport(rt, c.callTag, u.secret) }
		}
		u.secret.Set(secrets...)
		initTimeout := pick(spec.InitTimeout.Std(), m.opts.InitTimeout)
		sctx, cancel := context.WithTimeout(ctx, initTimeout)
		shown := *spec // as it was dialled, for the error of a refused redirect
		_, err = startHTTP(sctx, spec, headers, httpOptions{
			Logger:          u.logger,
			MaxMessageBytes: m.opts.MaxMessageBytes,
			Wrap:            wrap,
			StandardHeaders: standardHeaders,
			Where:           func() string { return u.home().urlChange(shown) },
		}, c)
		cancel()
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", spec.Transport)
	}

	initTimeout := pick(spec.InitTimeout.Std(), m.opts.InitTimeout)
	ictx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	caps := &mcp.ClientCapabilities{}
	if m.opts.ClientCapabilities != nil {
		caps = m.opts.ClientCapabilities(spec)
	}
	// The list-changed handlers never run (the Conn routes notifications
	// itself); declaring them makes go-sdk open a subscriptions/listen
	// stream with a 2026-07-28 upstream, which only then sends list_changed.
	client := mcp.NewClient(&mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion},
		&mcp.ClientOptions{Logger: slog.New(redact.NewHandler(m.opts.SDKLogger.Handler(), u.secret)), Capabilities: caps,
			ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
			PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
		})
	pv := spec.ProtocolVersion
	if pv == "" {
		pv = m.opts.ProtocolVersion
		if spec.Transport == TransportSSE && era.IsStateless(pv) {
			pv = era.Session // the transport has no stateless era
		}
	}
	// An abandoned attempt (or the init timeout) closes the connection at
	// once: go-sdk's Connect then ends without waiting for what it still
	// writes (its notifications/cancelled to an upstream that may never
	// answer). A close that started is waited for: it reads the session
	// this function sets, and a handshake it raced is abandoned all the
	// same.
	closed := make(chan struct{})
	stopClosing := context.AfterFunc(ictx, func() {
		defer close(closed)
		c.closeNow()
	})
	cs, err := client.Connect(ictx, sdkTransport{c}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if !stopClosing() {
		<-closed
		if err == nil {
			_ = cs.Close()
			err = ictx.Err()
		}
	}
	if err != nil {
		linkErr := c.Err()
		if sl, ok := c.link.(*stdioLink); ok && !errors.Is(linkErr, ErrExited) && writeFailed(err) && ctx.Err() == nil {
			// The child exited before it read initialize: the write
			// failed (and go-sdk closed the connection) a moment before
			// its exit is seen. Say it exited, with its status.
			t := time.NewTimer(time.Second)
			select {
			case <-sl.exited:
				linkErr = sl.exitError()
			case <-t.C:
			}
			t.Stop()
		}
		c.closeNow()
		switch {
		case linkErr != nil && errors.Is(linkErr, ErrExited):
			if tail := u.stderr.Tail(); len(tail) > 0 {
				return nil, fmt.Errorf("initialize: %w; its last stderr line: %s", linkErr, tail[len(tail)-1])
			}
			return nil, fmt.Errorf("initialize: %w", linkErr)
		case linkErr != nil && !errors.Is(linkErr, ErrClosed):
			return nil, fmt.Errorf("initialize: %w", linkErr)
		case ictx.Err() != nil && ctx.Err() == nil:
			return nil, fmt.Errorf("initialize: no answer within %s", initTimeout)
		}
		return nil, fmt.Errorf("initialize: %w", err)
	}
	c.session = cs
	c.init = cs.InitializeResult()
	info, _ := json.Marshal(mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion})
	c.setEra(c.init.ProtocolVersion, info)
	c.dual = newSessionEra(u, spec, c)
	return c, nil
}

func pick(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// maxListPages bounds pagination, so an upstream that keeps returning a
// cursor cannot loop the hub forever.
const maxListPages = 1000

// list fetches every page of a list method and returns the items of field.
// A stateless-era upstream's tools with invalid header annotations are
// left out.
func list(ctx context.Context, c *Conn, method, field string) ([]json.RawMessage, error) {
	items, err := listPages(ctx, c, method, field)
	if err == nil && method == "tools/list" && c.Stateless() {
		items = c.keepValidTools(items)
	}
	return items, err
}

func listPages(ctx context.Context, c *Conn, method, field string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	var cursor []byte
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, fmt.Errorf("%s: more than %d pages", method, maxListPages)
		}
		var params []byte
		if cursor != nil {
			params = []byte(`{"cursor":` + string(cursor) + `}`)
		}
		r, err := c.Call(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, &RPCError{Raw: r.Error})
		}
		var next []byte
		err = wire.Members(r.Result, func(k, v []byte) error {
			switch string(k) {
			case field:
				return wire.Elements(v, func(e []byte) error {
					items = append(items, json.RawMessage(e))
					return nil
				})
			case "nextCursor":
				if v[0] == '"' && len(v) > 2 {
					next = slices.Clone(v)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: invalid result: %w", method, err)
		}
		if next == nil || (cursor != nil && string(next) == string(cursor)) {
			return items, nil
		}
		cursor = next
	}
}

// RPCError is a JSON-RPC error an upstream returned.
type RPCError struct {
	Raw []byte // the error object
}

func (e *RPCError) Error() string {
	var v struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Raw, &v) != nil {
		return "upstream error " + preview(e.Raw)
	}
	return fmt.Sprintf("upstream error %d: %s", v.Code, v.Message)
}

// Code returns the error's code, or 0.
func (e *RPCError) Code() int64 {
	var v struct {
		Code int64 `json:"code"`
	}
	_ = json.Unmarshal(e.Raw, &v)
	return v.Code
}

// listInventory lists everything the upstream's capabilities announce, the
// kinds concurrently (one round trip's wait instead of up to four).
func listInventory(ctx context.Context, c *Conn) (Inventory, error) {
	var inv Inventory
	caps := c.init.Capabilities
	var wg sync.WaitGroup
	var errs [4]error
	if caps == nil || caps.Tools != nil {
		wg.Go(func() { inv.Tools, errs[0] = list(ctx, c, "tools/list", "tools") })
	}
	if caps != nil && caps.Prompts != nil {
		wg.Go(func() { inv.Prompts, errs[1] = list(ctx, c, "prompts/list", "prompts") })
	}
	if caps != nil && caps.Resources != nil {
		wg.Go(func() { inv.Resources, errs[2] = list(ctx, c, "resources/list", "resources") })
		wg.Go(func() {
			// Templates are optional even for resource servers.
			inv.Templates, errs[3] = list(ctx, c, "resources/templates/list", "resourceTemplates")
			var rpcErr *RPCError
			if errors.As(errs[3], &rpcErr) {
				inv.Templates, errs[3] = nil, nil
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return inv, err
		}
	}
	if b, err := json.Marshal(c.init); err == nil {
		inv.ServerInfo = b
	}
	inv.SyncedAt = time.Now()
	return inv, nil
}

// writeFailed reports whether err is a write to a pipe whose reader is gone.
func writeFailed(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) ||
		strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "file already closed")
}
