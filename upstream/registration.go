package upstream

import "time"

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
	// ApprovedHash is LaunchSpec.Hash of the launch spec that was approved.
	ApprovedHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Approved reports whether r is approved and the approval covers its current
// launch spec. A mismatch means the launch spec changed after the approval,
// for instance because the stored row was edited behind the hub's back.
func (r Registration) Approved() bool {
	return r.Approval == ApprovalApproved && r.ApprovedHash != "" && r.ApprovedHash == r.Spec.Launch().Hash()
}

// Redacted returns a copy of r whose secret values (env and header values,
// URL query values) are masked; see [Spec.Redacted].
func (r Registration) Redacted() Registration {
	r.Spec = r.Spec.Redacted()
	return r
}
