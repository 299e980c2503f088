package catalog

import (
	"slices"
	"strings"
)

// Takeover is an exposed tool name a server would take from the server
// that holds it now.
type Takeover struct {
	Name string // the exposed name
	From string // the server that holds it now
}

// Takeovers returns the tool names that adding cand to srcs (or putting it
// in place of the source of the same server) takes from the servers that
// hold them now, sorted by name: under the merge policy the server sorting
// first wins a name, and the other's tool is hidden. It builds both
// catalogs, so every rule of Build applies.
func Takeovers(srcs []Source, cand Source, opts *Options) []Takeover {
	holder := map[string]string{}
	for _, e := range Build(srcs, opts).Tools() {
		if e.Server != "" {
			holder[e.Name] = e.Server
		}
	}
	after := slices.DeleteFunc(slices.Clone(srcs), func(s Source) bool { return s.Server == cand.Server })
	after = append(after, cand)
	var out []Takeover
	for _, e := range Build(after, opts).Tools() {
		if from, ok := holder[e.Name]; ok && e.Server == cand.Server && from != cand.Server {
			out = append(out, Takeover{Name: e.Name, From: from})
		}
	}
	slices.SortFunc(out, func(a, b Takeover) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Exposable returns the tool names server could take over, whatever it
// lists: the names the servers of srcs expose now that a tool of the same
// name from server would win, sorted by name. It is what can be said of a
// server before it ever listed its tools.
func Exposable(srcs []Source, server string, opts *Options) []Takeover {
	var every []Item
	for _, e := range Build(srcs, opts).Tools() {
		if e.Server == "" || e.Server == server {
			continue
		}
		if it, err := ParseTool(e.Raw); err == nil {
			every = append(every, it)
		}
	}
	return Takeovers(srcs, Source{Server: server, Tools: every}, opts)
}
