-- Which client sessions the per-session instances of an upstream run for
-- (their labels, comma-separated), beside their number (0007), for mcp-hub
-- status (issue 16).

ALTER TABLE upstream_status ADD COLUMN instance_sessions TEXT NOT NULL DEFAULT '';
