package clientconfig

import (
	"path"
	"strings"
)

// NPMPackage is the npm package that launches the hub: npx -y NPMPackage.
// Its sources are npm/cli; scripts/npm.sh builds it.
const NPMPackage = "@mcp-hub/cli"

// LaunchesHub reports whether a stdio entry (command and args) runs
// mcp-hub: its command is an mcp-hub binary (mcp-hub, mcp-hub.exe, or a
// path ending in one), or its arguments name the npm package
// (npx -y @mcp-hub/cli, @mcp-hub/cli@1.2.3, also through cmd /c). hubArgs
// are the arguments the hub itself gets: those after the package for npx.
func LaunchesHub(command string, args []string) (hubArgs []string, ok bool) {
	// A Windows path has backslashes, which are no separator elsewhere.
	base := strings.ToLower(path.Base(strings.ReplaceAll(command, `\`, "/")))
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".cmd")
	if base == "mcp-hub" {
		return args, true
	}
	for i, a := range args {
		if a == NPMPackage || strings.HasPrefix(a, NPMPackage+"@") {
			return args[i+1:], true
		}
	}
	return nil, false
}
