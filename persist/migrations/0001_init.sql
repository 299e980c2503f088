-- Registered upstreams, their last listed capabilities and the audit log.

CREATE TABLE upstreams (
    id            TEXT PRIMARY KEY NOT NULL,     -- UUID v4
    name          TEXT NOT NULL UNIQUE,
    description   TEXT NOT NULL DEFAULT '',
    transport     TEXT NOT NULL,
    config        TEXT NOT NULL,                 -- JSON of the whole upstream.Spec
    enabled       INTEGER NOT NULL,
    auto_connect  INTEGER NOT NULL,
    source        TEXT NOT NULL CHECK (source IN ('config', 'admin', 'cli')),
    approval      TEXT NOT NULL CHECK (approval IN ('approved', 'pending', 'rejected')),
    approved_hash TEXT NOT NULL DEFAULT '',      -- upstream.LaunchSpec.Hash of the approved launch spec
    created_at    TEXT NOT NULL,                 -- RFC 3339, UTC
    updated_at    TEXT NOT NULL
);

CREATE TABLE capabilities (
    upstream_id        TEXT PRIMARY KEY NOT NULL REFERENCES upstreams (id) ON DELETE CASCADE,
    tools              TEXT,                     -- JSON arrays of raw objects; NULL = never listed
    resources          TEXT,
    resource_templates TEXT,
    prompts            TEXT,
    server_info        TEXT,                     -- JSON object
    last_synced_at     TEXT
);

CREATE TABLE audit (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       TEXT NOT NULL,
    actor    TEXT NOT NULL,
    action   TEXT NOT NULL,
    upstream TEXT NOT NULL DEFAULT '',
    detail   TEXT                                -- JSON; never secret values
);
