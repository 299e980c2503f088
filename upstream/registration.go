package upstream

import (
	"errors"
	"time"
)

// ErrStoreUnavailable is wrapped by the errors of a registration store that
// cannot be reached (a PostgreSQL server that is down or cut off): nothing
// was read or written. The hub keeps serving what it has and refuses
// changes until the store is back.
var ErrStoreUnavailable = errors.New("registration store unavailable")

// Source says who registered an upstream.
type Source string

// The sources.
const (
	SourceConfig Source = "config" // the hub's configuration file
	SourceAdmin  Source = "admin"  // a client, through the hub's admin tools
	SourceCLI    Source = "cli"    // a person at the mcp-hub command line
)

// Approval is the state of a person's approval of an upstream's launch spec.
type Approval string

// The approval states.
const (
	ApprovalApproved Approval = "approved"
	ApprovalPending  Approval = "pending"
	ApprovalRejected Approval = "rejected"
)

// Registration is a registered upstream as the hub stores it: its spec, who
// added it, and whether a person approved what it runs.
type Registration struct {
	ID          string // UUID, assigned when first stored
	Spec        Spec
	Enabled     bool
	AutoConnect bool
	Source      Source
	Approval    Approval
	// ApprovedHash is the [Spec.Fingerprint] of the spec that was approved.
	// It covers secret values: it is never shown.
	ApprovedHash string
	// ApprovalNote says why the hub (not a person) put a registration back
	// to pending, e.g. [NotePredatesValueReview]; empty otherwise.
	ApprovalNote string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Approved reports whether r is approved and the approval covers its current
// spec ([Spec.Fingerprint]). A mismatch means what it runs changed after the
// approval, for instance because the stored row was edited behind the hub's
// back.
func (r Registration) Approved() bool {
	return r.Approval == ApprovalApproved && r.ApprovedHash != "" && r.ApprovedHash == r.Spec.Fingerprint()
}

// Approve records a person's approval of r's current spec.
func (r *Registration) Approve() {
	r.Approval, r.ApprovedHash, r.ApprovalNote = ApprovalApproved, r.Spec.Fingerprint(), ""
}

// ApprovalState is r's approval as people read it: "approved", "rejected",
// "pending", "pending: NOTE" when the hub took an approval back, or
// "changed (needs approval)" when what it runs no longer matches its
// approval.
func (r Registration) ApprovalState() string {
	switch {
	case r.Approval == ApprovalApproved && !r.Approved():
		return "changed (needs approval)"
	case r.Approval == ApprovalPending && r.ApprovalNote != "":
		return "pending: " + r.ApprovalNote
	}
	return string(r.Approval)
}

// Redacted returns a copy of r whose secret values (env and header values,
// URL userinfo and query values, secret-looking arguments) are masked; see
// [Spec.Redacted]. The approved fingerprint, a hash of those values, is
// dropped: the copy is for showing, not for checking approval.
func (r Registration) Redacted() Registration {
	r.Spec = r.Spec.Redacted()
	r.ApprovedHash = ""
	return r
}
