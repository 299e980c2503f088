// Package hub is the MCP server that clients talk to. It serves one merged
// catalog of the tools of many upstream servers (package upstream) and
// forwards calls to the upstream that owns each tool.
//
// The hot path never goes through go-sdk's typed structs: a session scans
// each inbound message ([wire.Parse]); tools/list is answered from the
// catalog's pre-encoded bytes and tools/call is forwarded as raw bytes, with
// only the request id (and, where needed, the tool name and progress token)
// rewritten. go-sdk's Server runs the control plane of every session:
// initialize, ping, logging/setLevel and the hub's own hub_* tools. It sees
// each request under an integer id of the session's own, and its answer goes
// out under the client's id bytes (sdk.go), so every answer, on every path,
// carries the id exactly as the client wrote it (ids.go).
//
// A catalog is rebuilt whenever an upstream connects, drops or reports a list
// change, swapped in atomically with its search index (package toolsearch;
// only the servers that changed are indexed again), and announced to every
// session with notifications/tools/list_changed. With Options.Expose in
// search mode a session's tools/list holds the hub's own tools, the
// always-listed ones and those it found and called, and it is told only of
// changes to that list (search.go).
//
// An upstream serves every session from one instance, or, with scope
// session (or auto, once it asked something the hub could not attribute),
// each session from an instance of its own (scope.go); everything such an
// instance sends belongs to its session.
//
// hub imports catalog and upstream; it never imports persist: the store it
// needs is an interface it declares.
package hub
