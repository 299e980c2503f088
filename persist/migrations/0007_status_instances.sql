-- The number of per-session instances of an upstream (scope session, or
-- auto once switched) the reporting hub ran, for mcp-hub status.

ALTER TABLE upstream_status ADD COLUMN instances INTEGER NOT NULL DEFAULT 0;
