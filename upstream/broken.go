package upstream

import (
	"errors"
	"fmt"
)

// ErrBroken is wrapped by the error for a stored registration that cannot
// be decoded (its spec is not valid JSON, names an unknown transport, …).
var ErrBroken = errors.New("the stored registration cannot be decoded")

// BrokenRegistration is a stored registration that cannot be decoded: what
// is known of it without decoding. It never runs; it can be listed and
// removed. It is an error wrapping [ErrBroken].
type BrokenRegistration struct {
	ID     string
	Name   string
	Source Source // as stored; may itself be what is wrong
	// Reason says, in words, why it cannot be decoded. It never holds the
	// stored values themselves.
	Reason string
}

// Error implements error.
func (b BrokenRegistration) Error() string {
	return fmt.Sprintf("upstream %q: %v: %s", b.Name, ErrBroken, b.Reason)
}

// Unwrap returns [ErrBroken].
func (b BrokenRegistration) Unwrap() error { return ErrBroken }
