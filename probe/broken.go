package probe

import (
	"fmt"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// A stored registration that cannot be decoded (a corrupt row, an unknown
// transport) is shown by mcp-hub list, status and doctor as FAILED with the
// reason, and mcp-hub remove removes it; the hub runs all the others.

// BrokenWhy is what the commands say about a broken registration.
func BrokenWhy(b upstream.BrokenRegistration) string {
	return fmt.Sprintf("%v: %s", upstream.ErrBroken, b.Reason)
}

// BrokenFix is the way out.
func BrokenFix(name string) string {
	return fmt.Sprintf("remove it with `mcp-hub remove %s` and register it again", name)
}

// A stored registration of source config that the config in effect does
// not define was stored by a hub started with another config file (or an
// earlier version of this one). It is stale: mcp-hub list, status and
// doctor show it as such and never run it, a hub started with this config
// forgets it, and mcp-hub remove removes it.

// StalePrefix starts what the commands say about a stale registration.
const StalePrefix = "stale"

// StaleWhy is what the commands say about the stale registration name.
func StaleWhy(cfg *config.Config, name string) string {
	where := cfg.File + ", the config file in effect, does not define it"
	if cfg.File == "" {
		where = "no config file is in effect"
		if why := cfg.WhyNone(); why != "" {
			where += " (" + why + ")"
		}
	}
	return fmt.Sprintf("%s: %s; a hub started with another config file registered it. A hub started with this config forgets it; mcp-hub remove %s forgets it now",
		StalePrefix, where, name)
}

// fileOr names the config file f, or says "the config file" when there is
// none.
func fileOr(f string) string {
	if f == "" {
		return "the config file"
	}
	return f
}
