-- Secrets of the hub's own (issue 26): the key of the digests it hands out
-- (package keyed), one per store, so that every hub sharing the store (the
-- replicas of a team hub) keys them alike. value is hex; nothing shows it.

CREATE TABLE hub_secrets (
    name       TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    created_at TEXT NOT NULL
);
