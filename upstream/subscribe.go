package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// Resource subscriptions on a stateless-era connection. The session era's
// resources/subscribe and resources/unsubscribe are gone from 2026-07-28:
// a client subscribes with a subscriptions/listen request whose filter
// names the resources, and the server sends notifications/resources/updated
// on that request's stream for as long as it stays open. The connection
// translates: each subscribed uri gets a listen stream of its own (as
// go-sdk's client does), opened by resources/subscribe and closed by
// resources/unsubscribe, so the hub above subscribes the same way on
// either era.

// listens are a connection's listen streams, by resource uri, and the
// acknowledgements they wait for.
type listens struct {
	mu     sync.Mutex
	byURI  map[string]func()        // uri → cancel of its stream
	acking map[string]chan struct{} // raw listen request id → closed on its acknowledgement
}

// subscribe opens a listen stream for the uri in params and returns once
// the server acknowledged it (or refused it).
func (c *Conn) subscribe(ctx context.Context, params []byte) (Reply, error) {
	uri, err := paramURI(params)
	if err != nil {
		return Reply{}, err
	}
	c.listens.mu.Lock()
	if _, ok := c.listens.byURI[uri]; ok {
		c.listens.mu.Unlock()
		return Reply{Result: []byte(`{}`)}, nil
	}
	n := c.nextID.Add(1)
	key := string(wire.HubID(nil, n))
	acked := make(chan struct{})
	if c.listens.acking == nil {
		c.listens.acking = map[string]chan struct{}{}
		c.listens.byURI = map[string]func(){}
	}
	c.listens.acking[key] = acked
	c.listens.mu.Unlock()
	defer func() {
		c.listens.mu.Lock()
		delete(c.listens.acking, key)
		c.listens.mu.Unlock()
	}()
	filter := wire.AppendString([]byte(`{"notifications":{"resourceSubscriptions":[`), uri)
	filter = append(filter, "]}}"...)
	ended := make(chan result, 1)
	cancel, err := c.startN(n, "subscriptions/listen", filter, 0, nil, func(r Reply, err error) {
		ended <- result{r: r, err: err}
		c.listens.mu.Lock()
		delete(c.listens.byURI, uri) // the server ended it
		c.listens.mu.Unlock()
	})
	if err != nil {
		return Reply{}, err
	}
	select {
	case <-acked:
		c.listens.mu.Lock()
		c.listens.byURI[uri] = cancel
		c.listens.mu.Unlock()
		return Reply{Result: []byte(`{}`)}, nil
	case res := <-ended:
		if res.err == nil && res.r.Error == nil {
			res.err = errors.New("the server ended the subscription before acknowledging it")
		}
		return res.r, res.err
	case <-ctx.Done():
		cancel()
		return Reply{}, ctx.Err()
	}
}

// unsubscribe closes the listen stream of the uri in params, if any. On
// stdio it stays open until the connection ends: every listen of a stdio
// connection shares the server's one session, and go-sdk's server (v1.8.0)
// forgets that session's list-change subscription when any of its listens
// ends, so closing one would silence the connection's list changes. The
// hub delivers updates only to sessions that subscribed, so an update
// after the unsubscribe reaches nobody.
func (c *Conn) unsubscribe(params []byte) (Reply, error) {
	uri, err := paramURI(params)
	if err != nil {
		return Reply{}, err
	}
	if _, stdio := c.link.(*stdioLink); stdio {
		return Reply{Result: []byte(`{}`)}, nil
	}
	c.listens.mu.Lock()
	cancel := c.listens.byURI[uri]
	delete(c.listens.byURI, uri)
	c.listens.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return Reply{Result: []byte(`{}`)}, nil
}

// acknowledged handles notifications/subscriptions/acknowledged: it reports
// whether the acknowledgement was for a listen stream of the connection's
// own subscriptions (nothing else needs it).
func (c *Conn) acknowledged(params []byte) bool {
	id := wire.GetMeta(params, "io.modelcontextprotocol/subscriptionId")
	if id == nil {
		return false
	}
	c.listens.mu.Lock()
	ch := c.listens.acking[string(wire.TrimSpace(id))]
	delete(c.listens.acking, string(wire.TrimSpace(id)))
	c.listens.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	return ch != nil
}

func paramURI(params []byte) (string, error) {
	v, err := wire.Get(params, "uri")
	if err != nil || v == nil {
		return "", fmt.Errorf("params.uri is required")
	}
	return wire.String(v)
}
