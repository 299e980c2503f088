package upstream

import (
	"encoding/json"
	"errors"
	"time"
)

// Trust says what the hub does when an approved upstream lists a tool,
// prompt or resource template (or sends instructions) that differs from
// what was pinned, or one that is new: see [Registration.TrustPolicy].
type Trust string

// The trust policies.
const (
	// TrustPin quarantines a changed or new tool, prompt or resource
	// template: it leaves the catalog and calls to it are refused until a
	// person approves it (mcp-hub approve). The default of upstreams a
	// client or the command line registered.
	TrustPin Trust = "pin"
	// TrustWarn serves it, logs the change and flags the upstream until a
	// person approves it. The default of the config file's upstreams.
	TrustWarn Trust = "warn"
	// TrustOff neither pins nor checks anything.
	TrustOff Trust = "off"
)

// TrustPolicy returns the trust policy that applies to r: its spec's, or
// else [TrustWarn] for the config file's upstreams (whose author wrote what
// they run) and [TrustPin] for the others.
func (r Registration) TrustPolicy() Trust {
	if r.Spec.Trust != "" {
		return r.Spec.Trust
	}
	if r.Source == SourceConfig {
		return TrustWarn
	}
	return TrustPin
}

// PinKind is the kind of item a [Pin] covers.
type PinKind string

// The kinds of pinned items.
const (
	PinTool         PinKind = "tool"
	PinPrompt       PinKind = "prompt"
	PinTemplate     PinKind = "resourceTemplate"
	PinInstructions PinKind = "instructions" // the initialize result's instructions
)

// Pin is what was accepted of one item an upstream offers: the SHA-256 of
// the canonical JSON of its whole definition, and that definition (to show
// what changed). Every pinned upstream has an instructions pin (its
// instructions may be empty): an upstream without one was never pinned.
type Pin struct {
	Kind PinKind
	// Name is the tool's or prompt's name, the template's uriTemplate, ""
	// for instructions.
	Name string
	// Hash is the hex SHA-256 of Definition.
	Hash string
	// Definition is the canonical JSON of the item as the upstream listed
	// it (a JSON string for instructions). It holds no secrets of the
	// hub's: it is what the upstream tells every client.
	Definition json.RawMessage
	// ApprovedBy says who accepted it: "cli", "api", "admin:<client>", or
	// "hub" for the first listing after an approval.
	ApprovedBy string
	ApprovedAt time.Time
}

// PinChange is one pin to record: Pin replaces the pin of the same kind and
// name whose hash is Prev ("" when there is none).
type PinChange struct {
	Pin  Pin
	Prev string
}

// PinRecord is a set of pin changes that belong together, stored with their
// history and one audit entry in one transaction.
type PinRecord struct {
	// Actor and Action are those of the audit entry and of each history
	// row.
	Actor, Action string
	Changes       []PinChange
	// Baseline records the pins only when the upstream has none yet
	// ([ErrPinned] otherwise).
	Baseline bool
	// Detail is the audit entry's JSON detail; it must not hold secrets.
	Detail json.RawMessage
}

// Errors of recording pins.
var (
	// ErrPinsChanged: a pin is no longer the one a change was reviewed
	// against (someone approved or re-pinned it meanwhile).
	ErrPinsChanged = errors.New("pins changed meanwhile")
	// ErrPinned: a baseline for an upstream that has pins already.
	ErrPinned = errors.New("already pinned")
)
