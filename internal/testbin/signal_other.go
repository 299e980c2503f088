//go:build !unix

package testbin

import "os"

// signalable reports whether pid can be found.
func signalable(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
