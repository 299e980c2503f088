//go:build !linux

package upstream

// Supervise does nothing here: there is no child subreaper outside Linux.
// Stopping an upstream signals its process group (see supervise.go).
func Supervise() error { return nil }

func wakeReaper() {}

// reap forgets every member: without /proc none is ever remembered.
func (f *family) reap() bool {
	f.mu.Lock()
	clear(f.known)
	f.mu.Unlock()
	return true
}
