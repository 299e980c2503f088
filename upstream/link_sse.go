package upstream

// The legacy HTTP+SSE transport of an upstream (2024-11-05): a GET
// stream that names the endpoint messages are POSTed to.

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
)

// sseLink speaks the legacy HTTP+SSE transport (2024-11-05): one GET stream
// carries everything from the server, starting with the "endpoint" event
// that names where to POST messages.
type sseLink struct {
	url    string
	client *http.Client
	static map[string]string // the upstream's configured headers
	s      sink
	logger *slog.Logger
	where  func() string // where its url is changed (httpOptions.Where)
	max    int

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	endpoint  string // set once before start returns
	closeOnce sync.Once
}

func (l *sseLink) pid() int { return 0 }

func (l *sseLink) start(ctx context.Context) error {
	req, err := http.NewRequestWithContext(l.ctx, http.MethodGet, l.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	setHeaders(req.Header, l.static)
	type result struct {
		resp *http.Response
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		resp, err := l.client.Do(req)
		ch <- result{resp, err}
	}()
	var resp *http.Response
	select {
	case r := <-ch:
		if r.err != nil {
			return requestErr(r.err, l.where)
		}
		resp = r.resp
	case <-ctx.Done():
		l.cancel()
		return ctx.Err()
	}
	if resp.StatusCode/100 != 2 {
		drainClose(resp.Body)
		return fmt.Errorf("SSE stream: HTTP %s", resp.Status)
	}
	r := newSSEReader(resp.Body, l.max, "", 0)
	endpoint := make(chan error, 1)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer r.release()
		defer drainClose(resp.Body)
		sawEndpoint := false
		for {
			ev, err := r.nextFor(l.s)
			if err != nil {
				if !sawEndpoint {
					endpoint <- fmt.Errorf("SSE stream ended before the endpoint event: %w", err)
					return
				}
				if l.ctx.Err() == nil {
					l.s.fail(fmt.Errorf("%w: the SSE stream closed", ErrUnreachable))
				}
				return
			}
			switch ev.event {
			case "endpoint":
				if sawEndpoint {
					continue
				}
				u, err := l.resolveEndpoint(string(ev.data))
				if err != nil {
					endpoint <- err
					return
				}
				l.endpoint, sawEndpoint = u, true
				endpoint <- nil
			case "":
				if sawEndpoint && len(wire.TrimSpace(ev.data)) > 0 {
					l.s.receive(ev.data, nil)
				}
			}
		}
	}()
	select {
	case err := <-endpoint:
		return err
	case <-ctx.Done():
		return fmt.Errorf("waiting for the SSE endpoint event: %w", ctx.Err())
	}
}

// resolveEndpoint resolves the endpoint event against the stream's URL and
// insists on the same origin: the hub sends the upstream's headers (often
// credentials) there.
func (l *sseLink) resolveEndpoint(ref string) (string, error) {
	base, err := url.Parse(l.url)
	if err != nil {
		return "", err
	}
	u, err := base.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("invalid endpoint event %q: %w", ref, err)
	}
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("endpoint event points to another origin (%s)", u.Host)
	}
	return u.String(), nil
}

func (l *sseLink) send(ctx context.Context, msg []byte) error {
	ctx, done := linkCtx(ctx, l.ctx)
	defer done()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	setHeaders(req.Header, l.static)
	telemetry.FromContext(ctx).SetHeaders(req.Header)
	resp, err := do(l.client, req)
	if err != nil {
		err = requestErr(err, l.where)
		if linkLost(err) {
			l.s.fail(err)
		}
		return err
	}
	defer drainClose(resp.Body)
	if resp.StatusCode == http.StatusNotFound {
		expire(l.s, nil)
		return fmt.Errorf("%w (HTTP 404)", ErrSessionMissing)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return nil
}

func (l *sseLink) abort() { l.close() }

func (l *sseLink) close() {
	l.closeOnce.Do(func() {
		l.cancel()
		l.wg.Wait()
		l.client.CloseIdleConnections()
	})
}
