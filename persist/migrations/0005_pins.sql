-- Tool pins (issue 17): what was accepted of each tool, prompt and resource
-- template an upstream lists, and of its instructions (kind 'instructions',
-- name ''), as the SHA-256 of the canonical JSON of the whole definition.
-- An upstream with no row here was never pinned.

CREATE TABLE pins (
    upstream_id TEXT NOT NULL REFERENCES upstreams (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('tool', 'prompt', 'resourceTemplate', 'instructions')),
    name        TEXT NOT NULL,                   -- '' for instructions
    hash        TEXT NOT NULL,                   -- hex SHA-256
    definition  TEXT NOT NULL,                   -- canonical JSON; never a secret of the hub's
    approved_by TEXT NOT NULL,                   -- cli, api, admin:<client>, hub (first listing)
    approved_at TEXT NOT NULL,                   -- RFC 3339, UTC
    PRIMARY KEY (upstream_id, kind, name)
);

-- Every pin change, kept when the upstream is removed (by name, as the audit
-- log keeps it).
CREATE TABLE pin_history (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        TEXT NOT NULL,
    upstream  TEXT NOT NULL,
    kind      TEXT NOT NULL,
    name      TEXT NOT NULL,
    old_hash  TEXT NOT NULL DEFAULT '',          -- '' for a first pin
    new_hash  TEXT NOT NULL,
    actor     TEXT NOT NULL,
    action    TEXT NOT NULL
);

CREATE INDEX pin_history_upstream ON pin_history (upstream, id);
