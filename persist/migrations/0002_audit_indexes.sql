-- Indexes for reading the audit log by time and per upstream.

CREATE INDEX audit_at ON audit (at);
CREATE INDEX audit_upstream ON audit (upstream, id);
