// Package persist stores the hub's upstream registrations in SQLite.
//
// It owns the file hub.db in the hub's data directory (see [DefaultDir]) and
// everything in it: the registered upstreams ([Record], each holding the full
// [upstream.Spec] including env and header values, since they are needed to
// launch), the capabilities last listed from each upstream ([Capabilities],
// read back at once for a warm start) and an append-only audit log
// ([AuditEntry]). The schema is versioned with PRAGMA user_version and
// migrated by [Open]; a file written by a newer mcp-hub is refused with
// [ErrTooNew] and a damaged one with [ErrCorrupt], both without touching it.
//
// The package only stores: it does not validate specs beyond what the
// schema needs, decide approvals or log anything. A row it cannot decode
// (invalid JSON in its spec, an unknown transport) is not an error of the
// whole store: [Store.List] leaves it out, [Store.Broken] lists it with
// the reason, [Store.Get] returns it as an [upstream.BrokenRegistration]
// and [Store.Delete] removes it. Secret values never leave
// it except through [Record.Spec]; use [Record.Redacted] before showing a
// record.
//
// Concurrency: a [Store] is safe for concurrent use by many goroutines, and
// several processes (the running hub and the mcp-hub CLI) may open the same
// directory at once. The database runs in WAL mode with synchronous=FULL, so
// a write that returned is durable and readers never block writers. Every
// write is one BEGIN IMMEDIATE transaction on the Store's single writer
// connection: writes within a process queue on that connection, writes from
// different processes wait for each other through SQLite's busy timeout, and
// read-modify-write ([Store.Update]) is atomic across processes. Reads use a
// pool of other connections. [Store.Changed] tells a long-running process
// that another process committed, so it can reload.
//
// persist imports package upstream for its types only.
package persist
