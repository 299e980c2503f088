-- OAuth tokens of HTTP upstreams (issue 13); see
-- migrations/0006_oauth_tokens.sql. PostgreSQL: pasted is a BOOLEAN.

CREATE TABLE oauth_tokens (
    upstream       TEXT PRIMARY KEY NOT NULL,
    resource       TEXT NOT NULL,
    access_token   TEXT NOT NULL,
    refresh_token  TEXT NOT NULL DEFAULT '',
    token_type     TEXT NOT NULL DEFAULT '',
    expiry         TEXT NOT NULL DEFAULT '',   -- RFC 3339; '' when unknown
    scopes         TEXT NOT NULL DEFAULT '',   -- space-separated
    issuer         TEXT NOT NULL DEFAULT '',
    token_url      TEXT NOT NULL DEFAULT '',
    auth_style     INTEGER NOT NULL DEFAULT 0,
    client_id      TEXT NOT NULL DEFAULT '',
    client_secret  TEXT NOT NULL DEFAULT '',
    revocation_url TEXT NOT NULL DEFAULT '',
    pasted         BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at     TEXT NOT NULL
);
