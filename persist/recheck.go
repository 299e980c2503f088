package persist

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// dataMigrations are the steps of a schema migration that need Go: each
// runs right after the SQL of its version, in the same transaction, so it
// runs exactly once per database, whoever opens it first.
var dataMigrations = map[int]func(ctx context.Context, tx txx) error{
	4: recheckApprovals,
}

// recheckApprovals re-checks every stored approval under the approval
// fingerprint that covers values ([upstream.RecheckLegacyApproval]): an
// approval whose env or header values nobody was shown goes back to
// pending with a note, one that covered everything keeps its approval with
// the new fingerprint. Each approval taken back is written to the audit
// log. A row whose spec cannot be decoded is left as it is: its approval
// can never match a fingerprint.
func recheckApprovals(ctx context.Context, tx txx) error {
	var rows []struct {
		Name         string `db:"name"`
		Config       string `db:"config"`
		Source       string `db:"source"`
		ApprovedHash string `db:"approved_hash"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT name, config, source, approved_hash FROM upstreams
		WHERE approval = 'approved' ORDER BY name`); err != nil {
		return fmt.Errorf("re-check approvals: %w", err)
	}
	for _, row := range rows {
		r := upstream.Registration{Source: upstream.Source(row.Source), Approval: upstream.ApprovalApproved, ApprovedHash: row.ApprovedHash}
		if err := json.Unmarshal([]byte(row.Config), &r.Spec); err != nil {
			continue
		}
		r.Spec.Name = row.Name
		after, changed := upstream.RecheckLegacyApproval(r)
		if !changed {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE upstreams SET approval = ?, approved_hash = ?, approval_note = ? WHERE name = ?`,
			string(after.Approval), after.ApprovedHash, after.ApprovalNote, row.Name); err != nil {
			return fmt.Errorf("re-check the approval of %q: %w", row.Name, err)
		}
		if after.Approval == upstream.ApprovalApproved {
			continue
		}
		detail, _ := json.Marshal(map[string]string{"reason": after.ApprovalNote})
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (at, actor, action, upstream, detail) VALUES (?, 'hub', 'revoke', ?, ?)`,
			formatTime(time.Now()), row.Name, string(detail)); err != nil {
			return fmt.Errorf("re-check the approval of %q: %w", row.Name, err)
		}
	}
	return nil
}
