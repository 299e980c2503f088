package main

import (
	hubcli "github.com/mcp-hub/mcp-hub/cli"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/probe"
)

// The names the end-to-end tests use for what packages cli, config and
// probe define.
const (
	exitOK     = hubcli.ExitOK
	exitFail   = hubcli.ExitFail
	exitConfig = hubcli.ExitConfig
	sdkModule  = hubcli.SDKModule
)

// clientProtocolVersions are the versions mcp-hub --version lists.
var clientProtocolVersions = hubcli.ClientProtocolVersions()

// ServerConfig is one upstream of a config file.
type ServerConfig = config.Server

// What mcp-hub tools --json prints.
type (
	toolsReport  = probe.ToolsReport
	toolLine     = probe.ToolLine
	shadowLine   = probe.ShadowLine
	upstreamLine = probe.UpstreamLine
)
