//go:build !unix

package sweep

import (
	"errors"
	"os"
)

// The register is off where processes cannot be identified (no /proc), so
// these are never reached there.

var errUnsupported = errors.New("not supported on this system")

func lockFile(*os.File) (func(), error) { return nil, errUnsupported }

func kill(int) error { return errUnsupported }
