// Command mcp-hub puts one MCP endpoint in front of every MCP server a person
// uses. Run with no arguments it is a complete MCP server on stdio, which is
// how Claude Desktop and other clients launch it:
//
//	mcp-hub [--config FILE] [--data-dir DIR] [--log-level LEVEL]
//
// Configuration comes from, in rising precedence: built-in defaults, the
// config file (--config, $MCP_HUB_CONFIG, or <user config dir>/mcp-hub/hub.yaml),
// MCP_HUB_* environment variables, and the flags given. Logs go to stderr;
// stdout carries only JSON-RPC.
//
// This package only builds the command tree; the commands are in
// package cli (imported as hubcli: the tests have a helper named cli).
package main

import (
	"context"
	"fmt"
	"os"

	hubcli "github.com/mcp-hub/mcp-hub/cli"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Set by the Makefile with -ldflags "-X main.buildVersion=… -X main.buildCommit=…".
var (
	buildVersion = ""
	buildCommit  = ""
)

func main() {
	// Processes that stdio upstreams start and orphan (daemons) are
	// re-parented to the hub, which stops and reaps them with their
	// upstream (Linux; a no-op elsewhere).
	if err := upstream.Supervise(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-hub: cannot supervise the processes of upstreams:", err)
	}
	os.Exit(hubcli.Run(context.Background(), commands(), hubcli.Env{
		Args:    os.Args[1:],
		Environ: os.Environ(),
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Build:   hubcli.Build{Version: buildVersion, Commit: buildCommit},
		Program: hubcli.ProgramName(os.Args[0]),
	}))
}

// commands is the command tree; serve also runs when no command is named.
func commands() hubcli.Commands {
	return hubcli.Commands{
		"serve":   {Summary: "serve MCP over stdio (the default)", Run: hubcli.Serve},
		"list":    {Summary: "list the upstreams of the config file and the store", Run: hubcli.List},
		"status":  {Summary: "show each upstream's state as the running hub last reported it", Run: hubcli.Status},
		"add":     {Summary: "register an upstream: add NAME -- COMMAND [ARGS...], or add NAME --url URL", Run: hubcli.Add},
		"remove":  {Summary: "remove a registered upstream", Run: hubcli.Remove},
		"approve": {Summary: "review and approve what an upstream runs", Run: hubcli.Approve},
		"reject":  {Summary: "reject an upstream so it never runs", Run: hubcli.Reject},
		"import":  {Summary: "register the servers of a Claude Desktop, Cursor or VS Code config file", Run: hubcli.Import},
		"export":  {Summary: "write the registered upstreams as a Claude Desktop or hub.yaml config", Run: hubcli.Export},
		"tools":   {Summary: "connect every upstream and print the merged tool catalog", Run: hubcli.Tools},
		"doctor":  {Summary: "connect every upstream and diagnose the ones that fail", Run: hubcli.Doctor},
		"login":   {Summary: "log in to an HTTP upstream with OAuth (or store a pasted token)", Run: hubcli.Login},
		"logout":  {Summary: "delete (and revoke) an upstream's OAuth token", Run: hubcli.Logout},
		"setup":   {Summary: "add the hub to a client's config file: setup claude|claude-code|cursor|vscode|windsurf", Run: hubcli.Setup},
		"ui":      {Summary: "open the web console in a browser (starts a hub on a loopback port if none serves HTTP)", Run: hubcli.UI},
	}
}
