// Package persist stores the hub's upstream registrations in SQLite or
// PostgreSQL.
//
// It owns the file hub.db in the hub's data directory (see [DefaultDir]),
// or, with [OpenPostgres], the tables of a PostgreSQL schema that several
// hubs share (replicas behind a load balancer), and everything in them: the
// registered upstreams ([Record], each holding the full [upstream.Spec]
// including env and header values, since they are needed to launch), the
// capabilities last listed from each upstream ([Capabilities], read back at
// once for a warm start), approvals, tool pins and their history, OAuth
// tokens, the last reported statuses and an append-only audit log
// ([AuditEntry]). The schema is versioned (SQLite: PRAGMA user_version;
// PostgreSQL: the table hub_meta) and migrated when opened; a database
// written by a newer mcp-hub is refused with [ErrTooNew] and a damaged file
// with [ErrCorrupt], both without touching it. A PostgreSQL server that
// cannot be reached yields errors wrapping [ErrUnavailable].
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
// Both dialects run the same migrations (one list, in PostgreSQL's SQL where
// the dialects differ) and the same queries, with the same transactions:
// see dialect.go and postgres.go.
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
// that another process committed, so it can reload. On PostgreSQL every
// write is one transaction that first takes an advisory lock, which
// serialises writes across hubs the same way, and a change other hubs must
// apply is announced in it (NOTIFY; [Store.Notify]).
//
// persist imports package upstream for its types only.
package persist
