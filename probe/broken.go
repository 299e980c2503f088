package probe

import (
	"fmt"

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

// fileOr names the config file f, or says "the config file" when there is
// none.
func fileOr(f string) string {
	if f == "" {
		return "the config file"
	}
	return f
}
