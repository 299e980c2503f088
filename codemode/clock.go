package codemode

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errTimeLimit is the cause of a script's context that ran out of time.
var errTimeLimit = errors.New("code mode: time limit")

// clock is a script's wall-time budget. It stands still while the host
// waits for a person (Pause): a question the person takes a minute to
// answer does not use up the script's 30 seconds.
type clock struct {
	mu      sync.Mutex
	timer   *time.Timer
	left    time.Duration // budget not used before since
	since   time.Time     // when the clock last started
	paused  int
	stopped bool
}

type clockKey struct{}

// startClock returns a context that ends with cause errTimeLimit once d of
// unpaused time passed, and its stop function.
func startClock(parent context.Context, d time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	c := &clock{left: d, since: time.Now()}
	c.timer = time.AfterFunc(d, func() { cancel(errTimeLimit) })
	ctx = context.WithValue(ctx, clockKey{}, c)
	return ctx, func() {
		c.mu.Lock()
		c.stopped = true
		c.timer.Stop()
		c.mu.Unlock()
		cancel(context.Canceled)
	}
}

// remaining returns the unused budget.
func (c *clock) remaining() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused > 0 {
		return c.left
	}
	return c.left - time.Since(c.since)
}

// Pause stops the clock of the script whose context ctx is (or derives
// from) until the returned function is called. The hub calls it while it
// waits for a person's answer on a script's behalf. Outside a script it
// does nothing.
func Pause(ctx context.Context) (resume func()) {
	c, _ := ctx.Value(clockKey{}).(*clock)
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	if c.paused == 0 && !c.stopped && c.timer.Stop() {
		c.left -= time.Since(c.since)
	}
	c.paused++
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.paused--
			if c.paused == 0 && !c.stopped {
				c.since = time.Now()
				c.timer.Reset(max(c.left, 0))
			}
		})
	}
}
