-- OAuth tokens of HTTP upstreams (issue 13), one row per upstream name. The
-- row is keyed by name, not by upstreams.id, so that an upstream of the
-- config file can be logged in to before a hub stored it; deleting the
-- registration deletes its token (Store.Delete). access_token,
-- refresh_token and client_secret are secrets: nothing reads them but the
-- OAuth client. resource is the URL the token was issued for; the token is
-- never sent anywhere else.

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
    pasted         INTEGER NOT NULL DEFAULT 0,
    updated_at     TEXT NOT NULL
);
