package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/catalog"
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
		"description": "Search the tools of every MCP server behind this hub, including ones added after this conversation's tool list was made. " +
			"Returns matching tools with their server, name and input schema; call one with hub_call_tool.",
		"inputSchema": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"query"},
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "words to look for in tool names and descriptions; empty lists every tool"},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "description": "most tools to return (default 20)"},
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

// found is one hub_search_tools match.
type found struct {
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	ExposedAs   string          `json:"exposedAs,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	score       int
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

func (s *session) searchTools(m wire.Message) {
	args, err := toolArgs(m.Params)
	if err != nil {
		s.reply(m.ID, toolResultError(err.Error()))
		return
	}
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		s.reply(m.ID, toolResultError("arguments: "+err.Error()))
		return
	}
	if a.Limit <= 0 || a.Limit > 100 {
		a.Limit = 20
	}
	words := strings.Fields(strings.ToLower(a.Query))
	var hits []found
	s.h.upstreamTools(func(up *upstream.Upstream, it catalog.Item, exposed string) {
		var t struct {
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		_ = json.Unmarshal(it.Raw, &t)
		name, desc := strings.ToLower(it.Key), strings.ToLower(t.Description)
		score := 0
		for _, w := range words {
			switch {
			case strings.Contains(name, w):
				score += 3
			case strings.Contains(desc, w) || strings.Contains(strings.ToLower(up.Name()), w):
				score++
			default:
				return // every word must match somewhere
			}
		}
		hits = append(hits, found{Server: up.Name(), Tool: it.Key, ExposedAs: exposed, Description: t.Description, InputSchema: t.InputSchema, score: score})
	})
	slices.SortFunc(hits, func(x, y found) int {
		if x.score != y.score {
			return y.score - x.score
		}
		if c := strings.Compare(x.Server, y.Server); c != 0 {
			return c
		}
		return strings.Compare(x.Tool, y.Tool)
	})
	total := len(hits)
	if len(hits) > a.Limit {
		hits = hits[:a.Limit]
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%d tools match", total)
	if total > len(hits) {
		fmt.Fprintf(&text, " (showing %d)", len(hits))
	}
	text.WriteString(". Call one with hub_call_tool {server, tool, arguments}.\n")
	for _, f := range hits {
		fmt.Fprintf(&text, "\n- server %q, tool %q", f.Server, f.Tool)
		if f.ExposedAs != "" && f.ExposedAs != f.Tool {
			fmt.Fprintf(&text, " (listed as %q)", f.ExposedAs)
		}
		if f.Description != "" {
			fmt.Fprintf(&text, ": %s", f.Description)
		}
		fmt.Fprintf(&text, "\n  input schema: %s", f.InputSchema)
	}
	if hits == nil {
		hits = []found{}
	}
	res, err := json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": text.String()}},
		"structuredContent": map[string]any{"tools": hits, "total": total},
	})
	if err != nil {
		s.reply(m.ID, toolResultError(err.Error()))
		return
	}
	s.reply(m.ID, res)
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
	up, ok := s.h.mgr.Get(server)
	if !ok {
		s.reply(m.ID, toolResultError(fmt.Sprintf("hub_call_tool: no MCP server named %q runs behind this hub", server)))
		return
	}
	known := false
	s.h.upstreamTools(func(u *upstream.Upstream, it catalog.Item, _ string) {
		if u == up && it.Key == tool {
			known = true
		}
	})
	if msg, held := s.h.heldUpstreamTool(s, server, tool); !known && held {
		s.reply(m.ID, toolResultError("hub_call_tool: "+msg))
		return
	}
	if !known {
		if t := failureText(up); t != "" {
			s.reply(m.ID, toolResultError("hub_call_tool: "+t))
			return
		}
		s.reply(m.ID, toolResultError(fmt.Sprintf("hub_call_tool: MCP server %q has no tool %q (or the hub's filters hide it); hub_search_tools lists what there is", server, tool)))
		return
	}
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
