package toolsearch

import (
	"encoding/json"
	"strings"

	"github.com/mcp-hub/mcp-hub/catalog"
)

// FromCatalog returns the servers to index for a catalog built from srcs:
// each tool a source's filter lets through, once (a tool a server lists
// twice counts once), under the name the catalog exposes it as, or with
// ExposedAs "" when another server's tool or the hub holds its name
// (collision, reserved). Tools the catalog drops as invalid are left out,
// and so is everything the caller left out of srcs (tools held back by
// pins, servers not approved or not running). descriptions gives each
// server's description and instructions, by name.
func FromCatalog(cat *catalog.Catalog, srcs []catalog.Source, descriptions map[string]string) []Server {
	shadowed := map[[2]string]bool{} // (server, original) not exposed but reachable
	for _, s := range cat.Shadowed() {
		if s.Kind == catalog.KindTool && s.Server != "" && (s.Reason == catalog.ReasonCollision || s.Reason == catalog.ReasonReserved) {
			shadowed[[2]string{s.Server, s.Original}] = true
		}
	}
	var out []Server
	for _, src := range srcs {
		if src.Server == "" {
			continue
		}
		exposed := map[string]string{}
		for _, e := range cat.ServerEntries(src.Server) {
			if e.Kind == catalog.KindTool {
				exposed[e.Original] = e.Name
			}
		}
		srv := Server{Name: src.Server, Description: descriptions[src.Server]}
		seen := map[string]bool{}
		for _, it := range src.Tools {
			if it.Kind != catalog.KindTool || seen[it.Key] || !src.Filter.Match(it.Key) {
				continue
			}
			name, ok := exposed[it.Key]
			if !ok && !shadowed[[2]string{src.Server, it.Key}] {
				continue
			}
			seen[it.Key] = true
			srv.Tools = append(srv.Tools, Tool{Name: it.Key, ExposedAs: name, Raw: it.Raw})
		}
		out = append(out, srv)
	}
	return out
}

// ServerDescription is what a server says about itself, for
// Server.Description: its registered description, and the title,
// description and instructions of its initialize result (raw; nil when
// unknown).
func ServerDescription(registered string, initializeResult json.RawMessage) string {
	var init struct {
		Instructions string `json:"instructions"`
		ServerInfo   struct {
			Title       string `json:"title"`
			Description string `json:"description"`
		} `json:"serverInfo"`
	}
	if len(initializeResult) > 0 {
		_ = json.Unmarshal(initializeResult, &init)
	}
	var parts []string
	for _, p := range []string{registered, init.ServerInfo.Title, init.ServerInfo.Description, init.Instructions} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n")
}
