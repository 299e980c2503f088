package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// Set by the Makefile with -ldflags "-X main.buildVersion=… -X main.buildCommit=…".
var (
	buildVersion = ""
	buildCommit  = ""
)

// version returns the hub's version: the linker-set one, else the module
// version from the build info, else "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func commit() string {
	if buildCommit != "" {
		return buildCommit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func printVersion(w io.Writer) {
	fmt.Fprintf(w, "mcp-hub %s\ncommit: %s\ngo-sdk: %s\ngo: %s %s/%s\nprotocol versions: upstreams %s (pinned by default); clients 2024-11-05 … 2025-11-25\n",
		version(), commit(), sdkVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, upstream.DefaultProtocolVersion)
}
