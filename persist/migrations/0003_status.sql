-- The last state a running hub reported for each upstream, so the command
-- line can show it.

CREATE TABLE upstream_status (
    upstream_id TEXT PRIMARY KEY NOT NULL REFERENCES upstreams (id) ON DELETE CASCADE,
    state       TEXT NOT NULL,
    last_error  TEXT NOT NULL DEFAULT '',
    pid         INTEGER NOT NULL DEFAULT 0,
    tools       INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    since       TEXT NOT NULL,                   -- when the state began
    reported_at TEXT NOT NULL,
    hub_pid     INTEGER NOT NULL DEFAULT 0       -- the hub process that reported it
);
