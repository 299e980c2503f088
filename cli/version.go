package cli

import (
	"fmt"
	"github.com/mcp-hub/mcp-hub/era"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// version returns the hub's version: the linker-set one, else the module
// version from the build info, else "dev".
func (b Build) version() string {
	if b.Version != "" {
		return b.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// commit returns the VCS revision the binary was built from: the
// linker-set one, else the build info's (with "(modified)" when the work
// tree had changes), else "unknown".
func (b Build) commit() string {
	if b.Commit != "" {
		return b.Commit
	}
	rev, modified := "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	switch {
	case rev == "":
		return "unknown"
	case modified:
		return rev + " (modified)"
	}
	return rev
}

// module returns the main module's path and version from the build info.
func module() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" {
		return bi.Main.Path + " " + bi.Main.Version
	}
	return "unknown"
}

// SDKModule is the module path of the MCP Go SDK.
const SDKModule = "github.com/modelcontextprotocol/go-sdk"

// sdkVersion returns the version of go-sdk the binary was built with.
func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == SDKModule {
				if d.Replace != nil {
					return d.Version + " => " + d.Replace.Path + " " + d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

// ClientProtocolVersions returns the session-era MCP protocol versions the
// hub serves to its clients, newest first: the SupportedProtocolVersions
// hub.New gives go-sdk (hub/hub.go), 2026-07-28 aside (it has no initialize;
// the HTTP front serves it). TestVersionProtocols initializes a hub with
// each of them.
func ClientProtocolVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

func printVersion(w io.Writer, b Build) {
	fmt.Fprintf(w, "mcp-hub %s\n", b.version())
	fmt.Fprintf(w, "module: %s\n", module())
	fmt.Fprintf(w, "commit: %s\n", b.commit())
	fmt.Fprintf(w, "target: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "go-sdk: %s\n", sdkVersion())
	fmt.Fprintf(w, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "MCP protocol versions served to clients: %s\n", strings.Join(ClientProtocolVersions(), ", "))
	fmt.Fprintf(w, "MCP protocol version served to stateless clients (streamable HTTP): %s\n", era.Stateless)
	fmt.Fprintf(w, "MCP protocol version asked of upstreams: %s (protocolVersion pins another)\n", upstream.DefaultProtocolVersion)
}
