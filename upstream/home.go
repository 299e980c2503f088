package upstream

import "fmt"

// Home says where an upstream is defined, so that a message telling a
// person what to change about it (its url, its command, its headers, an
// env value, its initialize timeout) says where: in the config file that
// defines it, which is its approval and which a running hub reloads; or in
// the store, through the running hub's admin tools and REST API (a change
// a person then approves) or mcp-hub remove and add. [Options.Home] gives
// an upstream's; the zero Home knows nothing, and messages then say only
// what to change.
type Home struct {
	// Source is who registered the upstream: SourceConfig for the config
	// file, another source for the store; "" when unknown (an upstream
	// the embedding program added itself).
	Source Source
	// ConfigFile is the hub's config file in effect, "" when none.
	ConfigFile string
	// Command is a subcommand of mcp-hub as a person runs it on the store
	// the hub serves: "./bin/mcp-hub approve --data-dir /srv/hub" for
	// "approve". Nil: "mcp-hub approve".
	Command func(sub string) string
}

// inFile reports whether the config file defines the upstream.
func (h Home) inFile() bool { return h.Source == SourceConfig }

// stored reports whether the upstream is registered in the store.
func (h Home) stored() bool { return h.Source != "" && h.Source != SourceConfig }

// cmd is the command line of mcp-hub's sub for the upstream name.
func (h Home) cmd(sub, name string) string {
	c := "mcp-hub " + sub
	if h.Command != nil {
		c = h.Command(sub)
	}
	return c + " " + name
}

// file names the config file in a sentence.
func (h Home) file() string {
	if h.ConfigFile == "" {
		return "the hub's config file"
	}
	return h.ConfigFile
}

// Change is the sentence that says where a person changes what (a part of
// the upstream name's definition, in words: "its url") and how: update is
// that change as hub_update_server's argument (`"url": "NEW-URL"`), add
// the words after the name of an mcp-hub add that registers the upstream
// anew with the change ("--url NEW-URL"). It is "" for the zero Home.
func (h Home) Change(name, what, update, add string) string {
	switch {
	case h.inFile():
		return fmt.Sprintf("%q is defined in %s: edit %s there (a running hub applies the edit within seconds).", name, h.file(), what)
	case h.stored():
		return fmt.Sprintf("%q is registered in the store: change %s with hub_update_server or PUT /api/servers/%s {%s} and approve the change (%s), or register it anew: %s, then %s %s.",
			name, what, name, update, h.cmd("approve", name), h.cmd("remove", name), h.cmd("add", name), add)
	}
	return ""
}

// urlChange is [Home.Change] for an HTTP upstream's url.
func (h Home) urlChange(spec Spec) string {
	return h.Change(spec.Name, "its url", `"url": "NEW-URL"`, addURL(spec, "NEW-URL", ""))
}

// addURL is what follows the name in an mcp-hub add of spec's server at
// url, with the header given (a shell word; "" for none) and a mention of
// its other headers.
func addURL(spec Spec, url, header string) string {
	add := "--url " + url
	if t := spec.InferTransport(); t != (&Spec{URL: url}).InferTransport() {
		add += " --transport " + string(t)
	}
	if header != "" {
		add += " --header " + header
	}
	switch n := len(spec.Headers); {
	case n > 0 && header == "":
		add += " (and its --header flags)"
	case n > 1:
		add += " (and its other --header flags)"
	}
	return add
}

// home says where the upstream is defined (Options.Home).
func (u *Upstream) home() Home {
	if u.m.opts.Home == nil {
		return Home{}
	}
	return u.m.opts.Home(u.name)
}
