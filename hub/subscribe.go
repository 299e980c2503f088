package hub

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// subscriptions tracks which sessions subscribed to which resource of which
// upstream. The hub holds one upstream subscription per (upstream, uri)
// while at least one session wants it, and renews it when the upstream
// reconnects (a new connection knows nothing of the old one's).
type subscriptions struct {
	mu    sync.Mutex // guards following
	subs  map[subKey]map[*session]struct{}
	conns map[string]*upstream.Conn // the connection each upstream's subscriptions live on
}

type subKey struct{ server, uri string }

// subscribeTimeout bounds the hub's own subscribe and unsubscribe requests
// (those made for no waiting client).
const subscribeTimeout = 10 * time.Second

// add records s as a subscriber of key and reports whether it is the first.
func (t *subscriptions) add(key subKey, s *session) (first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.subs == nil {
		t.subs = map[subKey]map[*session]struct{}{}
		t.conns = map[string]*upstream.Conn{}
	}
	set := t.subs[key]
	if set == nil {
		set = map[*session]struct{}{}
		t.subs[key] = set
	}
	set[s] = struct{}{}
	return len(set) == 1
}

// remove drops s from the subscribers of every key with uri ("" for every
// key) and returns the keys that no session wants any more.
func (t *subscriptions) remove(s *session, uri string) []subKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	var empty []subKey
	for key, set := range t.subs {
		if uri != "" && key.uri != uri {
			continue
		}
		if _, ok := set[s]; !ok {
			continue
		}
		delete(set, s)
		if len(set) == 0 {
			delete(t.subs, key)
			empty = append(empty, key)
		}
	}
	return empty
}

// sessions returns the subscribers of key.
func (t *subscriptions) sessions(key subKey) []*session {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*session, 0, len(t.subs[key]))
	for s := range t.subs[key] {
		out = append(out, s)
	}
	return out
}

func (t *subscriptions) setConn(server string, c *upstream.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conns != nil {
		t.conns[server] = c
	}
}

// renewals returns, for each upstream whose subscriptions were made on a
// connection other than its live one, the uris to subscribe to again, and
// records the live connection as holding them.
func (t *subscriptions) renewals(mgr *upstream.Manager) map[*upstream.Upstream][]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out map[*upstream.Upstream][]string
	for key := range t.subs {
		up, ok := mgr.Get(key.server)
		if !ok {
			continue
		}
		c := up.Conn()
		held, ok := t.conns[key.server]
		if !ok {
			continue // its first subscribe is under way and records its connection
		}
		if c == nil || c == held {
			continue
		}
		if out == nil {
			out = map[*upstream.Upstream][]string{}
		}
		out[up] = append(out[up], key.uri)
	}
	for up := range out {
		t.conns[up.Name()] = up.Conn()
	}
	return out
}

func uriParams(uri string) []byte {
	b := wire.AppendString([]byte(`{"uri":`), uri)
	return append(b, '}')
}

// subscribe handles resources/subscribe: the first session to subscribe to
// a resource subscribes the hub upstream; later ones share it.
func (s *session) subscribe(m wire.Message) {
	uri, _, err := routingParams(m.Params, "uri")
	if err != nil {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params: "+err.Error(), nil)
		return
	}
	s.withResource(m, uri, findURI(uri), func(e catalog.Entry) {
		up, ok := s.h.mgr.Get(e.Server)
		if !ok {
			s.resourceNotFound(m.ID, uri)
			return
		}
		if s.subscribeOwn(m, up, uri) {
			return
		}
		key := subKey{e.Server, uri}
		if !s.h.subs.add(key, s) {
			s.reply(m.ID, []byte(`{}`))
			return
		}
		go func() {
			c := up.Conn() // the connection the subscription is made on
			r, err := up.Call(s.ctx, "resources/subscribe", uriParams(uri))
			switch {
			case err != nil:
				s.h.subs.remove(s, uri)
				s.replyError(m.ID, jsonrpc.CodeInternalError, fmt.Sprintf("upstream %q: subscribe %q: %v", e.Server, uri, err), nil)
			case r.Error != nil:
				s.h.subs.remove(s, uri)
				s.replyErrorObject(m.ID, r.Error)
			default:
				s.h.subs.setConn(e.Server, c)
				s.reply(m.ID, []byte(`{}`))
				if up.Conn() != c {
					s.h.renewSubscriptions() // it reconnected meanwhile
				}
			}
		}()
	})
}

// unsubscribe handles resources/unsubscribe; the hub unsubscribes upstream
// when no session wants the resource any more. Unsubscribing from something
// not subscribed succeeds.
func (s *session) unsubscribe(m wire.Message) {
	uri, _, err := routingParams(m.Params, "uri")
	if err != nil {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params: "+err.Error(), nil)
		return
	}
	s.h.dropSubscriptions(s.h.subs.remove(s, uri))
	s.reply(m.ID, []byte(`{}`))
}

// dropSubscriptions unsubscribes upstream from resources no session wants.
func (h *Hub) dropSubscriptions(keys []subKey) {
	for _, key := range keys {
		up, ok := h.mgr.Get(key.server)
		if !ok || up.Conn() == nil {
			continue
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
			defer cancel()
			if _, err := up.Call(ctx, "resources/unsubscribe", uriParams(key.uri)); err != nil {
				h.logger.Debug("unsubscribe", "upstream", key.server, "uri", key.uri, "err", err)
			}
		}()
	}
}

// renewSubscriptions subscribes again on upstreams that reconnected.
func (h *Hub) renewSubscriptions() {
	for up, uris := range h.subs.renewals(h.mgr) {
		go func() {
			for _, uri := range uris {
				ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
				r, err := up.Call(ctx, "resources/subscribe", uriParams(uri))
				cancel()
				if err == nil && r.Error != nil {
					err = fmt.Errorf("%s", r.Error)
				}
				if err != nil {
					h.logger.Warn("renew resource subscription", "upstream", up.Name(), "uri", uri, "err", err)
				}
			}
		}()
	}
}

// resourceUpdated delivers an upstream's notifications/resources/updated to
// the sessions that subscribed to that resource of that upstream.
func (h *Hub) resourceUpdated(server string, params []byte) {
	v, err := wire.Get(params, "uri")
	if err != nil || v == nil {
		return
	}
	uri, err := wire.String(v)
	if err != nil {
		return
	}
	for _, s := range h.subs.sessions(subKey{server, uri}) {
		if s.instanceOf(server) != nil {
			continue // subscribed on its own instance
		}
		s.notify("notifications/resources/updated", params, nil)
	}
}
