// Package upstream owns the hub's connections to upstream MCP servers: stdio
// child processes, legacy SSE and streamable HTTP endpoints.
//
// A [Manager] holds one supervisor per registered upstream. The supervisor is
// the only goroutine that changes its upstream's state; it connects, watches
// the connection, reconnects with backoff and shuts the upstream down. An
// upstream whose scope is session runs an instance per client session
// (instance.go), each an upstream with a supervisor of its own. Calls
// travel over a connection as raw JSON-RPC bytes ([Conn.Call]); go-sdk runs
// only the handshake.
//
// upstream imports no other mcp-hub package except internal ones.
package upstream
