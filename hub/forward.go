package hub

import (
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// codeResourceNotFound is MCP's error code for a resource no server offers.
const codeResourceNotFound = -32002

// routeRequest answers the list requests for prompts and resources from the
// catalog and forwards prompts/get, resources/read, resources/subscribe,
// resources/unsubscribe and completion/complete to the upstream that owns
// the name, uri or reference. It reports false for requests it leaves to
// go-sdk.
func (s *session) routeRequest(m wire.Message) bool {
	switch m.Method {
	case "prompts/list":
		s.listFromCatalog(m, (*catalog.Catalog).PromptsResult)
	case "resources/list":
		s.listFromCatalog(m, (*catalog.Catalog).ResourcesResult)
	case "resources/templates/list":
		s.listFromCatalog(m, (*catalog.Catalog).TemplatesResult)
	case "prompts/get":
		s.getPrompt(m)
	case "resources/read":
		s.readResource(m)
	case "resources/subscribe":
		s.subscribe(m)
	case "resources/unsubscribe":
		s.unsubscribe(m)
	case "completion/complete":
		s.complete(m)
	default:
		return false
	}
	return true
}

// listFromCatalog answers a list request with the catalog's pre-encoded
// result, waiting (bounded) while upstreams are on their first attempt.
func (s *session) listFromCatalog(m wire.Message, result func(*catalog.Catalog) []byte) {
	if s.h.settled() {
		s.reply(m.ID, result(s.h.Catalog()))
		return
	}
	go func() {
		s.h.waitSettled(s.ctx)
		s.reply(m.ID, result(s.h.Catalog()))
	}()
}

// resolve looks an item up in the catalog and runs then with the outcome.
// An item that is missing while upstreams are still on their first connect
// attempt is looked up again once they settle (bounded), so a client that
// remembers a name from an earlier session is not failed during start-up.
func (s *session) resolve(find func(*catalog.Catalog) (catalog.Entry, bool), then func(catalog.Entry, bool)) {
	if e, ok := find(s.h.Catalog()); ok {
		then(e, true)
		return
	}
	if s.h.settled() {
		// Settled now, but the catalog looked at above may be the one
		// before the rebuild that settled it: look again.
		e, ok := find(s.h.Catalog())
		then(e, ok)
		return
	}
	go func() {
		s.h.waitSettled(s.ctx)
		e, ok := find(s.h.Catalog())
		then(e, ok)
	}()
}

// findURI finds the resource with uri, or else the first template that
// matches it.
func findURI(uri string) func(*catalog.Catalog) (catalog.Entry, bool) {
	return func(c *catalog.Catalog) (catalog.Entry, bool) {
		if e, ok := c.Resource(uri); ok {
			return e, true
		}
		return c.MatchTemplate(uri)
	}
}

// getPrompt forwards prompts/get, renaming a prefixed or renamed prompt.
func (s *session) getPrompt(m wire.Message) {
	name, meta, err := routingParams(m.Params, "name")
	if err != nil {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params: "+err.Error(), nil)
		return
	}
	s.withPrompt(m, name, func(e catalog.Entry) {
		s.traceTarget(m.ID, m.Method, name, "", true) // a prompt of the catalog
		var set []wire.Member
		if e.Original != name {
			set = append(set, wire.Member{Key: "name", Value: wire.AppendString(nil, e.Original)})
		}
		s.forwardTo(m, e, name, meta, set)
	})
}

// withPrompt runs fn with the prompt exposed as name, or tells the client
// there is none.
func (s *session) withPrompt(m wire.Message, name string, fn func(catalog.Entry)) {
	s.resolve(func(c *catalog.Catalog) (catalog.Entry, bool) { return c.Prompt(name) }, func(e catalog.Entry, ok bool) {
		if !ok {
			msg, held := s.h.heldMessage(s, upstream.PinPrompt, name)
			if !held {
				msg = fmt.Sprintf("unknown prompt: %q", name)
			}
			s.replyError(m.ID, jsonrpc.CodeInvalidParams, msg, nil)
			return
		}
		fn(e)
	})
}

// withResource runs fn with the entry find finds for uri, or tells the
// client the resource is not found.
func (s *session) withResource(m wire.Message, uri string, find func(*catalog.Catalog) (catalog.Entry, bool), fn func(catalog.Entry)) {
	s.resolve(find, func(e catalog.Entry, ok bool) {
		if !ok {
			s.resourceNotFound(m.ID, uri)
			return
		}
		fn(e)
	})
}

// readResource forwards resources/read to the upstream that offers the uri
// (or a template that matches it). URIs are never rewritten.
func (s *session) readResource(m wire.Message) {
	uri, meta, err := routingParams(m.Params, "uri")
	if err != nil {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params: "+err.Error(), nil)
		return
	}
	s.withResource(m, uri, findURI(uri), func(e catalog.Entry) { s.forwardTo(m, e, uri, meta, nil) })
}

func (s *session) resourceNotFound(id []byte, uri string) {
	data := wire.AppendString([]byte(`{"uri":`), redact.Bound(uri))
	data = append(data, '}')
	code := int64(codeResourceNotFound)
	if s.stateless != nil {
		code = jsonrpc.CodeInvalidParams // SEP-2164, from 2026-07-28
	}
	s.replyError(id, code, fmt.Sprintf("resource not found: %q", uri), data)
}

// complete forwards completion/complete to the owner of its reference: a
// prompt (renamed as needed) or a resource template (or resource).
func (s *session) complete(m wire.Message) {
	ref, err := wire.Get(m.Params, "ref")
	if err != nil || ref == nil || ref[0] != '{' {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params.ref must be an object", nil)
		return
	}
	meta, _ := wire.Get(m.Params, "_meta")
	if meta != nil && meta[0] != '{' {
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params._meta must be an object", nil)
		return
	}
	typ, _, _ := routingParams(ref, "type")
	switch typ {
	case "ref/prompt":
		name, _, err := routingParams(ref, "name")
		if err != nil {
			s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params.ref: "+err.Error(), nil)
			return
		}
		s.withPrompt(m, name, func(e catalog.Entry) {
			var set []wire.Member
			if e.Original != name {
				newRef, err := wire.EditObject(ref, []wire.Member{{Key: "name", Value: wire.AppendString(nil, e.Original)}})
				if err != nil {
					s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params.ref: "+err.Error(), nil)
					return
				}
				set = append(set, wire.Member{Key: "ref", Value: newRef})
			}
			s.forwardTo(m, e, name, meta, set)
		})
	case "ref/resource":
		uri, _, err := routingParams(ref, "uri")
		if err != nil {
			s.replyError(m.ID, jsonrpc.CodeInvalidParams, "params.ref: "+err.Error(), nil)
			return
		}
		find := func(c *catalog.Catalog) (catalog.Entry, bool) {
			if e, ok := c.Template(uri); ok {
				return e, true
			}
			return findURI(uri)(c)
		}
		s.withResource(m, uri, find, func(e catalog.Entry) { s.forwardTo(m, e, uri, meta, nil) })
	default:
		s.replyError(m.ID, jsonrpc.CodeInvalidParams, fmt.Sprintf("params.ref.type %q: want ref/prompt or ref/resource", typ), nil)
	}
}

// forwardTo forwards a request to the upstream of a catalog entry.
func (s *session) forwardTo(m wire.Message, e catalog.Entry, label string, meta []byte, set []wire.Member) {
	up, ok := s.h.mgr.Get(e.Server)
	if !ok {
		s.replyError(m.ID, jsonrpc.CodeInternalError, fmt.Sprintf("upstream %q of %s %q was removed", e.Server, e.Kind, label), nil)
		return
	}
	s.forward(m, up, m.Method, label, meta, set)
}

// routingParams reads the string member key of params (or of a nested
// object) and the raw _meta object. A duplicate key, or a member whose name
// differs from key only in case, is rejected: the hub routes by that value
// and must read the same one the upstream will.
func routingParams(params []byte, key string) (string, []byte, error) {
	if params == nil {
		return "", nil, errors.New("params are required")
	}
	var (
		val  string
		seen bool
		meta []byte
	)
	err := wire.Members(params, func(k, v []byte) error {
		switch {
		case string(k) == key:
			if seen {
				return fmt.Errorf("duplicate member %q", key)
			}
			seen = true
			s, err := wire.String(v)
			if err != nil {
				return fmt.Errorf("%s must be a string", key)
			}
			val = s
		case strings.EqualFold(string(k), key):
			return fmt.Errorf("member %q is not allowed (it differs from %q only in case)", k, key)
		case string(k) == "_meta":
			if meta != nil {
				return errors.New(`duplicate member "_meta"`)
			}
			if v[0] != '{' {
				return errors.New("_meta must be an object")
			}
			meta = v
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	if !seen || val == "" {
		return "", nil, fmt.Errorf("%s is required", key)
	}
	return val, meta, nil
}
