package hub

import (
	"errors"
	"fmt"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/internal/suggest"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Some clients (Claude Desktop among them) list tools once and ignore
// list_changed, so tools that arrive later never reach their model. Two tools
// of the hub's own close that gap: hub_search_tools finds any upstream tool,
// with its schema, and hub_call_tool calls it. Both apply the upstreams'
// tool filters, and reach only upstreams the hub runs (so approved ones);
// hub_call_tool's result is the upstream's, byte for byte, like a direct
// call's.

const (
	searchToolName = "hub_search_tools"
	callToolName   = "hub_call_tool"
)

// discoveryTools returns the catalog items of hub_search_tools and
// hub_call_tool. The hub answers them itself, on the raw path.
func discoveryTools() []catalog.Item {
	tools := []map[string]any{{
		"name": searchToolName,
		"description": "Find the tools of the MCP servers behind this hub for what you want to do, described in plain words, " +
			"including tools not in your tool list. Returns the best matches with their server, name and input schema; call one with hub_call_tool.",
		"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"query"},
			"properties": map[string]any{
				"query":  map[string]any{"type": "string", "description": "what you want to do, in plain words; empty lists every tool"},
				"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "description": "most tools to return (default 10)"},
				"offset": map[string]any{"type": "integer", "minimum": 0, "description": "tools to skip, for the next page"},
			}},
	}, {
		"name": callToolName,
		"description": "Call a tool of an MCP server behind this hub by server and tool name, e.g. one found with hub_search_tools. " +
			"The result is the tool's own.",
		"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"server", "tool"},
			"properties": map[string]any{
				"server":    map[string]any{"type": "string", "description": "the MCP server's name"},
				"tool":      map[string]any{"type": "string", "description": "the tool's name at that server"},
				"arguments": map[string]any{"type": "object", "description": "the tool's arguments"},
			}},
	}}
	var items []catalog.Item
	for _, t := range tools {
		items = append(items, mustTool(t))
	}
	return items
}

// ownRawTool handles the hub's raw-path tools; it reports false for others
// (go-sdk's admin tools).
func (s *session) ownRawTool(m wire.Message, name string) bool {
	switch name {
	case searchToolName:
		s.searchTools(m)
	case callToolName:
		s.callUpstreamTool(m)
	case codeToolName:
		s.runCode(m)
	case enableCodeToolName:
		s.enableCodeMode(m)
	default:
		return false
	}
	return true
}

// toolArgs returns the arguments object of a tools/call.
func toolArgs(params []byte) ([]byte, error) {
	args, err := wire.Get(params, "arguments")
	if err != nil {
		return nil, err
	}
	if args == nil || string(args) == "null" {
		return []byte(`{}`), nil
	}
	if args[0] != '{' {
		return nil, fmt.Errorf("arguments must be an object")
	}
	return args, nil
}

// upstreamTools calls fn for each tool of each running upstream that its
// filter lets through, with the name it is exposed as ("" when shadowed).
func (h *Hub) upstreamTools(fn func(up *upstream.Upstream, it catalog.Item, exposed string)) {
	cat := h.Catalog()
	for _, u := range h.mgr.List() {
		inv := u.Inventory()
		if inv.Version == 0 && !inv.Stale {
			continue
		}
		spec := u.Spec()
		filter := catalog.Filter{Allow: spec.Tools.Allow, Deny: spec.Tools.Deny}
		exposed := map[string]string{}
		for _, e := range cat.ServerEntries(u.Name()) {
			if e.Kind == catalog.KindTool {
				exposed[e.Original] = e.Name
			}
		}
		for _, it := range h.vetted(u.Name(), inv).tools {
			if filter.Match(it.Key) {
				fn(u, it, exposed[it.Key])
			}
		}
	}
}

// callUpstreamTool handles hub_call_tool: it forwards tools/call to the
// named upstream under the tool's own name, with the client's arguments and
// _meta, and relays the upstream's result as is.
func (s *session) callUpstreamTool(m wire.Message) {
	args, err := toolArgs(m.Params)
	if err != nil {
		s.reply(m.ID, toolResultError(err.Error()))
		return
	}
	server, _, err1 := routingParams(args, "server")
	tool, _, err2 := routingParams(args, "tool")
	if err := errors.Join(err1, err2); err != nil {
		s.reply(m.ID, toolResultError("hub_call_tool: "+err.Error()))
		return
	}
	toolArgsRaw, err := toolArgs(args)
	if err != nil {
		s.reply(m.ID, toolResultError("hub_call_tool: "+err.Error()))
		return
	}
	up, known := s.h.upstreamTool(server, tool)
	if !known && !s.h.settled() {
		// The server may be on its first connect attempt (the hub just
		// started): wait for it (bounded), as a direct call of a name the
		// catalog does not hold yet does, instead of answering that it
		// has no such tool.
		go func() {
			s.h.waitSettled(s.ctx)
			up, known := s.h.upstreamTool(server, tool)
			s.callUpstreamToolOf(m, up, known, server, tool, toolArgsRaw)
		}()
		return
	}
	s.callUpstreamToolOf(m, up, known, server, tool, toolArgsRaw)
}

// upstreamTool returns the running upstream named server (nil when none)
// and whether its filter lets its tool tool through.
func (h *Hub) upstreamTool(server, tool string) (up *upstream.Upstream, known bool) {
	up, ok := h.mgr.Get(server)
	if !ok {
		return nil, false
	}
	h.upstreamTools(func(u *upstream.Upstream, it catalog.Item, _ string) {
		if u == up && it.Key == tool {
			known = true
		}
	})
	return up, known
}

// callUpstreamToolOf is callUpstreamTool once the upstream and tool are
// looked up.
func (s *session) callUpstreamToolOf(m wire.Message, up *upstream.Upstream, known bool, server, tool string, toolArgsRaw []byte) {
	if up == nil {
		var names []string
		for _, u := range s.h.mgr.List() {
			names = append(names, u.Name())
		}
		s.reply(m.ID, toolResultError(fmt.Sprintf("hub_call_tool: no MCP server named %q runs behind this hub%s", server, didYouMean(server, names))))
		return
	}
	if msg, held := s.h.heldUpstreamTool(s, server, tool); !known && held {
		s.reply(m.ID, toolResultError("hub_call_tool: "+msg))
		return
	}
	if !known {
		if t := failureText(up); t != "" {
			s.reply(m.ID, toolResultError("hub_call_tool: "+t))
			return
		}
		if inv := up.Inventory(); inv.Version == 0 && !inv.Stale {
			s.reply(m.ID, toolResultError(fmt.Sprintf("hub_call_tool: MCP server %q is still starting: its tools are not known yet; call again in a moment", server)))
			return
		}
		var names []string
		s.h.upstreamTools(func(u *upstream.Upstream, it catalog.Item, _ string) {
			if u == up {
				names = append(names, it.Key)
			}
		})
		s.reply(m.ID, toolResultError(fmt.Sprintf("hub_call_tool: MCP server %q has no tool %q%s (or the hub's filters hide it); hub_search_tools lists what there is",
			server, tool, didYouMean(tool, names))))
		return
	}
	s.usedUpstreamTool(server, tool)
	params := []byte(`{"name":`)
	params = wire.AppendString(params, tool)
	params = append(params, `,"arguments":`...)
	params = append(params, toolArgsRaw...)
	params = append(params, '}')
	meta, _ := wire.Get(m.Params, "_meta")
	if meta != nil && meta[0] != '{' {
		meta = nil
	}
	s.policyThen(m, server, tool, func() []byte { return toolArgsRaw }, func() {
		s.forward(wire.Message{ID: m.ID, Method: "tools/call", Params: params}, up, "tools/call", tool, meta, nil)
	})
}

// didYouMean is " (did you mean "x"?)" for the candidate closest to a
// mistyped name, or "". A model that wrote "memroy" fixes its call, or its
// script, from the answer alone.
// Names longer than any a server uses are not compared (the distance
// costs their length times each candidate's).
func didYouMean(name string, candidates []string) string {
	if len(name) > 128 {
		return ""
	}
	if c := suggest.Closest(name, candidates); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}
