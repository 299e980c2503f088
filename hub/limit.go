package hub

import (
	"sync"

	"golang.org/x/time/rate"
)

// writeLimiter bounds admin writes (registrations, removals): 10 at once,
// then one every 2 seconds, so a runaway model loop cannot churn the store
// or spawn processes in a storm. The zero value is ready to use.
type writeLimiter struct {
	once sync.Once
	l    *rate.Limiter
}

const (
	adminBurst = 10
	adminRate  = 0.5 // per second
)

// allow reports whether a write may go ahead now, and takes its token.
func (w *writeLimiter) allow() bool {
	w.once.Do(func() { w.l = rate.NewLimiter(rate.Limit(adminRate), adminBurst) })
	return w.l.Allow()
}
