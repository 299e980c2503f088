package probe

import (
	"fmt"

	"github.com/mcp-hub/mcp-hub/catalog"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// ToolsReport is the merged tool catalog of a probe, as mcp-hub tools
// --json prints it.
type ToolsReport struct {
	// Expose is how the hub serves this catalog: "all" (tools/list holds
	// every tool) or "search" (catalog.expose search, or auto over
	// searchAbove tools).
	Expose string `json:"expose"`
	// Tools are the tools a client's tools/list holds, in its order.
	Tools []ToolLine `json:"tools"`
	// Unlisted are, in search mode, the exposed tools tools/list leaves
	// out: hub_search_tools finds them, hub_call_tool calls them.
	Unlisted  []ToolLine     `json:"unlisted"`
	Shadowed  []ShadowLine   `json:"shadowed"`
	Upstreams []UpstreamLine `json:"upstreams"`
}

// ToolLine is one exposed tool. Upstream is "hub" for the hub's own tools.
type ToolLine struct {
	Name     string   `json:"name"`
	Upstream string   `json:"upstream"`
	Original string   `json:"original"`
	Fixes    []string `json:"fixes,omitempty"`
}

// ShadowLine is a tool that is not exposed.
type ShadowLine struct {
	Name       string `json:"name"`
	Upstream   string `json:"upstream"`
	Original   string `json:"original"`
	ShadowedBy string `json:"shadowedBy,omitempty"`
	Reason     string `json:"reason"`
	Why        string `json:"why"`
}

// UpstreamLine is one upstream and whether its tools are in the catalog.
type UpstreamLine struct {
	Name   string         `json:"name"`
	Source string         `json:"source"`
	State  upstream.State `json:"state,omitempty"`
	// Tools is how many tools it offers, Exposed how many of them the
	// catalog exposes.
	Tools   int    `json:"tools"`
	Exposed int    `json:"exposed"`
	Error   string `json:"error,omitempty"`
	NotRun  string `json:"notRun,omitempty"`
}

// NewToolsReport returns the tool catalog of the probe p.
func NewToolsReport(p *Report) *ToolsReport {
	rep := &ToolsReport{Expose: "all", Tools: []ToolLine{}, Unlisted: []ToolLine{}, Shadowed: []ShadowLine{}, Upstreams: []UpstreamLine{}}
	listed := map[string]bool{}
	if p.Searching {
		rep.Expose = "search"
		for _, en := range p.Listed {
			listed[en.Name] = true
		}
	}
	for _, en := range p.Catalog.Tools() {
		tl := ToolLine{Name: en.Name, Upstream: serverOrHub(en.Server), Original: en.Original, Fixes: en.Fixes}
		if p.Searching && !listed[en.Name] {
			rep.Unlisted = append(rep.Unlisted, tl)
		} else {
			rep.Tools = append(rep.Tools, tl)
		}
	}
	for _, s := range p.Catalog.Shadowed() {
		if s.Kind != catalog.KindTool {
			continue
		}
		rep.Shadowed = append(rep.Shadowed, ShadowLine{Name: s.Name, Upstream: serverOrHub(s.Server), Original: s.Original,
			ShadowedBy: s.Winner, Reason: s.Reason, Why: ShadowWhy(s)})
	}
	for _, r := range p.Results {
		ul := UpstreamLine{Name: r.Spec.Name, Source: r.Source, State: r.Status.State, NotRun: r.NotRun, Error: r.Status.LastError}
		if r.NotRun != "" {
			ul.State = ""
		} else if !r.Settled {
			ul.Error = fmt.Sprintf("did not connect within %s", p.Wait)
		}
		ul.Tools = len(r.Inv.Tools)
		for _, en := range p.Catalog.ServerEntries(r.Spec.Name) {
			if en.Kind == catalog.KindTool {
				ul.Exposed++
			}
		}
		rep.Upstreams = append(rep.Upstreams, ul)
	}
	return rep
}

func serverOrHub(s string) string {
	if s == "" {
		return catalog.HubWinner
	}
	return s
}

// ShadowWhy explains a shadow report to a person, in the words of the
// item's kind: a tool or prompt has a name, a resource a URI, a resource
// template a URI template.
func ShadowWhy(s catalog.Shadow) string {
	switch s.Reason {
	case catalog.ReasonCollision:
		if s.Winner == catalog.HubWinner {
			return fmt.Sprintf("the hub's own %s has this %s", kindWord(s.Kind), keyWord(s.Kind))
		}
		return fmt.Sprintf("%s offers a %s of this %s too and sorts first", s.Winner, kindWord(s.Kind), keyWord(s.Kind))
	case catalog.ReasonDuplicate:
		return fmt.Sprintf("the upstream lists this %s more than once; the first one is exposed", keyWord(s.Kind))
	case catalog.ReasonReserved:
		return "names starting " + catalog.ReservedPrefix + " are reserved for the hub"
	case catalog.ReasonInvalid:
		return "invalid"
	}
	return s.Reason
}

// kindWord names a kind of catalog item for people.
func kindWord(k catalog.Kind) string {
	if k == catalog.KindTemplate {
		return "resource template"
	}
	return string(k)
}

// keyWord names what identifies an item of kind k.
func keyWord(k catalog.Kind) string {
	switch k {
	case catalog.KindResource:
		return "URI"
	case catalog.KindTemplate:
		return "URI template"
	}
	return "name"
}
