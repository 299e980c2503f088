package hub

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hub's tool search (package toolsearch ranks): hub_search_tools,
// SearchTools for code, and the search mode of tools/list (Options.Expose),
// where a session's list holds the hub's own tools, the always-listed ones
// and the tools the session found and called.

// searchInstructions tells the model, in initialize, to search and then
// call, when tools/list is served in search mode.
const searchInstructions = "This hub serves the tools of many MCP servers but lists only a few of them. " +
	"To do something no listed tool does, call hub_search_tools with what you want to do in plain words, " +
	"then call the tool it finds with hub_call_tool {server, tool, arguments}. " +
	"A tool you call this way is added to your tool list when your client follows list changes."

// autoInstructions is searchInstructions for expose auto: initialize
// comes before the servers have listed their tools, so it cannot say
// which mode the session will see.
const autoInstructions = "This hub serves the tools of many MCP servers. When they are many, it lists only a few of them: " +
	"then, to do something no listed tool does, call hub_search_tools with what you want to do in plain words, " +
	"and call the tool it finds with hub_call_tool {server, tool, arguments}."

// newCatalogState indexes a catalog built from srcs (descs: each server's
// description) and decides how tools/list serves it. prev's index segments
// are reused for the servers that did not change.
func (h *Hub) newCatalogState(cat *catalog.Catalog, srcs []catalog.Source, descs map[string]string, prev *catalogState) *catalogState {
	st := &catalogState{cat: cat}
	var prevIndex *toolsearch.Index
	if prev != nil {
		st.version = prev.version + 1
		prevIndex = prev.search
	}
	st.search = toolsearch.Build(toolsearch.FromCatalog(cat, srcs, descs), prevIndex)
	if st.searching = h.opts.Expose.Searching(cat); st.searching {
		st.listed = h.opts.Expose.Listed(cat)
		st.listResult = toolsearch.ToolsResult(cat, st.listed, nil)
	}
	return st
}

// SearchTools ranks the tools of the catalog the hub serves now for a
// request in words, as hub_search_tools does: the limit best, and how many
// match. Tools held back (unapproved servers, quarantined tools, filters)
// are never among them; a tool another server's tool shadows is, with
// ExposedAs "" (hub_call_tool reaches it).
func (h *Hub) SearchTools(query string, limit int) ([]toolsearch.Result, int) {
	return h.cat.Load().search.Search(query, limit)
}

// SearchIndex returns the index of the catalog the hub serves now.
func (h *Hub) SearchIndex() *toolsearch.Index { return h.cat.Load().search }

// toolsResultOf is the tools/list result for this session of st.
func (s *session) toolsResultOf(st *catalogState) []byte {
	if !st.searching {
		return st.cat.ToolsResult()
	}
	names := s.found.Names()
	if len(names) == 0 {
		return st.listResult
	}
	return toolsearch.ToolsResult(st.cat, st.listed, names)
}

// toolsChanged reports whether the session's tools/list differs between
// two catalog states (catalogChanged: the catalog's tools differ). In
// search mode a change to tools the session does not list is not news
// to it.
func (s *session) toolsChanged(prev, next *catalogState, catalogChanged bool) bool {
	switch {
	case prev.searching != next.searching:
		return true
	case !next.searching || !catalogChanged:
		return catalogChanged
	}
	return !bytes.Equal(s.toolsResultOf(prev), s.toolsResultOf(next))
}

// usedTool records that the session called a tool by its exposed name (""
// for none), in search mode: a tool not listed yet joins the session's
// list, and the session alone is told.
func (s *session) usedTool(exposed string) {
	st := s.h.cat.Load()
	if exposed == "" || !st.searching || s.stateless != nil {
		return // a stateless client's session lasts one request
	}
	for _, e := range st.listed {
		if e.Name == exposed {
			return // listed anyway
		}
	}
	if s.found.Use(exposed, s.h.opts.Expose.SessionLimit()) {
		s.notify("notifications/tools/list_changed", nil, nil)
	}
}

// usedUpstreamTool is usedTool for a tool named by server and original
// name (hub_call_tool).
func (s *session) usedUpstreamTool(server, tool string) {
	if r, ok := s.h.cat.Load().search.Lookup(server, tool); ok {
		s.usedTool(r.ExposedAs)
	}
}

// searchInstructions is go-sdk middleware that adds searchInstructions to
// initialize (and server/discover) results in search mode, and
// autoInstructions in auto mode.
func (h *Hub) searchInstructions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var add string
		switch h.opts.Expose.Mode {
		case toolsearch.ModeSearch:
			add = searchInstructions
		case toolsearch.ModeAuto:
			add = autoInstructions
		}
		if err != nil || add == "" {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Instructions = joinInstructions(r.Instructions, add)
		case *mcp.DiscoverResult:
			r.Instructions = joinInstructions(r.Instructions, add)
		}
		return res, err
	}
}

// searchTools answers hub_search_tools {query, limit, offset}.
func (s *session) searchTools(m wire.Message) {
	args, err := toolArgs(m.Params)
	if err != nil {
		s.reply(m.ID, toolResultError(err.Error()))
		return
	}
	var a struct {
		Query  string `json:"query"`
		Limit  int    `json:"limit"`
		Offset int    `json:"offset"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		s.reply(m.ID, toolResultError("hub_search_tools: arguments: "+err.Error()))
		return
	}
	if a.Limit <= 0 {
		a.Limit = defaultSearchLimit
	}
	a.Limit = min(a.Limit, maxSearchLimit)
	a.Offset = max(a.Offset, 0)
	// A search made while upstreams are still on their first connect
	// attempt (a model's first act, or a script's) would miss their tools
	// and tell the model no tool does what it asked: it waits for them,
	// bounded as a session's first tools/list is.
	s.whenSettled(func() {
		results, total := s.h.cat.Load().search.Page(a.Query, a.Offset, a.Limit)
		s.reply(m.ID, toolsearch.AppendCallResult(nil, a.Query, results, total, a.Offset))
	})
}

// whenSettled runs fn now when no upstream is on its first connect
// attempt, else on a goroutine of its own once none is (or once the
// first-list wait is over), as the first tools/list waits.
func (s *session) whenSettled(fn func()) {
	if s.h.settled() {
		fn()
		return
	}
	go func() {
		s.h.waitSettled(s.ctx)
		fn()
	}()
}

// hub_search_tools' limit: by default, and at most.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 100
)

// logExposeSwitch says, for expose auto, that tools/list switched mode:
// the person reading the log learns why their client's tool list shrank
// (or grew) to the hub's own tools.
func (h *Hub) logExposeSwitch(st *catalogState) {
	n := 0
	for _, t := range st.cat.Tools() {
		if t.Server != "" {
			n++
		}
	}
	above := h.opts.Expose.SearchAbove
	if above == 0 {
		above = toolsearch.DefaultSearchAbove
	}
	if st.searching {
		h.logger.Info("catalog.expose auto: tools/list now holds the hub's own tools; the others are found with hub_search_tools",
			"tools", n, "searchAbove", above)
		return
	}
	h.logger.Info("catalog.expose auto: tools/list holds every tool again", "tools", n, "searchAbove", above)
}
