-- Approvals cover every value (issue 12): approved_hash now holds
-- upstream.Spec.Fingerprint. Approvals stored before are re-checked once, in
-- the same transaction, by Go code (recheckApprovals in migrate.go); this
-- column says why one went back to pending.

ALTER TABLE upstreams ADD COLUMN approval_note TEXT NOT NULL DEFAULT '';
