package hub

import (
	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The hub speaks both protocol eras on both sides; package era translates
// between them. This file wires it into the client side: a stateless
// (2026-07-28) client's answers are completed to its revision whatever era
// the upstream that produced them speaks.

// listTTLMs is how long a stateless client may consider a list the hub
// served from its catalog fresh. The hub hears of changes at once (list
// changed notifications, its own registry) and tells clients that listen
// for them; the TTL bounds staleness for clients that do not.
const listTTLMs = 60_000

// cacheHint says what the hub knows about how an answer to method may be
// cached. Lists come from the catalog: the same for every client, so
// public, unless a per-session upstream contributes (its instances may
// list differently for each session); while upstreams are still on their
// first connect the catalog is about to change, so its TTL is 0. Anything
// forwarded (resources/read) is the upstream's to say: when it does not,
// the hub knows nothing, so 0 and private.
func (h *Hub) cacheHint(method string) era.Cache {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
	default:
		return era.Cache{Scope: era.Private}
	}
	c := era.Cache{TTLMs: listTTLMs, Scope: era.Public}
	if !h.settled() {
		c.TTLMs = 0
	}
	for _, u := range h.mgr.List() {
		if u.Scope() == upstream.ScopeSession {
			c.Scope = era.Private
			break
		}
	}
	return c
}

// completeAnswer completes the answer to a stateless client's request for
// its revision (resultType, caching hints); errors and complete results
// pass as they are.
func (h *Hub) completeAnswer(method string, data []byte) []byte {
	m, err := wire.Parse(data)
	if err != nil || m.Result == nil {
		return data
	}
	res, err := era.Complete(method, m.Result, h.cacheHint(method))
	if err != nil || len(res) == len(m.Result) {
		return data // unchanged (Complete only ever adds)
	}
	return wire.AppendResult(make([]byte, 0, len(res)+len(m.ID)+40), m.ID, res)
}
