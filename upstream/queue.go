package upstream

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/telemetry"
)

// A call that finds every in-flight slot of a connected upstream busy
// waits in the upstream's queue (first come, first served) instead of on a
// goroutine of its own: a finished call starts the next one. Measured with
// the bench's stdio suite at 32 calls in flight against the default
// maxInFlight of 10, the goroutine per waiting call (parked twice: for a
// slot, then for the reply) cost the hub about 40 µs of CPU per call.

// queued is a call waiting for a slot.
type queued struct {
	u       *Upstream
	method  string
	params  []byte
	tag     any
	done    func(Reply, error)
	timeout time.Duration // the whole call's, from since
	since   time.Time
	timer   *time.Timer // ends the wait at timeout

	mu        sync.Mutex // guards following
	state     queueState
	cancel    func() // of the started call
	cancelled bool   // cancel came while it was being started
}

type queueState int

const (
	qWaiting  queueState = iota
	qStarting            // taken off the queue, being started
	qStarted             // cancel is the started call's
	qOver                // settled while waiting (cancelled, timed out)
)

// take moves a waiting call to state to; it reports false when the call
// was no longer waiting.
func (q *queued) take(to queueState) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != qWaiting {
		return false
	}
	q.state = to
	return true
}

// withdraw is the cancel TryStartTag hands out for a queued call.
func (q *queued) withdraw() {
	q.mu.Lock()
	switch q.state {
	case qWaiting:
		q.state = qOver
		q.mu.Unlock()
		q.timer.Stop()
		q.u.unqueue(q)
		q.done(Reply{}, context.Canceled)
		return
	case qStarting:
		q.cancelled = true
	case qStarted:
		cancel := q.cancel
		q.mu.Unlock()
		cancel()
		return
	}
	q.mu.Unlock()
}

// started records the started call's cancel, and runs it when the call was
// withdrawn while it was being started.
func (q *queued) started(cancel func()) {
	q.mu.Lock()
	q.state, q.cancel = qStarted, cancel
	run := q.cancelled
	q.mu.Unlock()
	if run {
		cancel()
	}
}

// enqueue queues a call until a slot is free, or its timeout passes.
func (u *Upstream) enqueue(q *queued) {
	q.timer = time.AfterFunc(q.timeout, func() {
		if q.take(qOver) {
			u.unqueue(q)
			q.done(Reply{}, fmt.Errorf("%w after %s waiting for a free slot (maxInFlight %d)", ErrTimeout, q.timeout, cap(u.inflight)))
		}
	})
	u.qmu.Lock()
	u.queue = append(u.queue, q)
	u.qmu.Unlock()
	u.dispatch() // a slot may have come free meanwhile
}

// waiting reports whether calls are queued.
func (u *Upstream) waiting() bool {
	u.qmu.Lock()
	defer u.qmu.Unlock()
	return len(u.queue) > 0
}

// unqueue removes a call that stopped waiting.
func (u *Upstream) unqueue(q *queued) {
	u.qmu.Lock()
	defer u.qmu.Unlock()
	if i := slices.Index(u.queue, q); i >= 0 {
		u.queue = slices.Delete(u.queue, i, i+1)
	}
}

// pop takes the next waiting call off the queue, or returns nil.
func (u *Upstream) pop() *queued {
	u.qmu.Lock()
	defer u.qmu.Unlock()
	for len(u.queue) > 0 {
		q := u.queue[0]
		u.queue[0] = nil
		u.queue = u.queue[1:]
		if q.take(qStarting) {
			return q
		}
	}
	u.queue = nil // let the backing array go
	return nil
}

// release frees a slot and, when calls wait, starts them on a goroutine of
// their own (release runs on a connection's reader goroutine, which must
// never block on a send).
func (u *Upstream) release() {
	<-u.inflight
	if u.waiting() {
		go u.dispatch()
	}
}

// dispatch starts queued calls while slots are free.
func (u *Upstream) dispatch() {
	for u.waiting() {
		select {
		case u.inflight <- struct{}{}:
		default:
			return // a running call's release dispatches
		}
		q := u.pop()
		if q == nil {
			<-u.inflight // emptied meanwhile; the loop looks again
			continue
		}
		q.timer.Stop()
		spanOf(q.tag).Queued(q.since)
		u.startQueued(q)
	}
}

// startQueued starts a call taken off the queue, holding a slot.
func (u *Upstream) startQueued(q *queued) {
	left := q.timeout - time.Since(q.since)
	if conn := u.conn.Load(); conn != nil && conn.Err() == nil && left > 0 {
		if conn, ok := u.connFor(conn, q.method, q.params, q.tag); ok {
			if cancel, err := u.start(conn, q.method, q.params, left, q.tag, q.done); err == nil {
				q.started(cancel)
				return
			}
		}
	}
	u.release()
	if left <= 0 {
		q.started(func() {})
		q.done(Reply{}, fmt.Errorf("%w after %s waiting for a free slot (maxInFlight %d)", ErrTimeout, q.timeout, cap(u.inflight)))
		return
	}
	// The connection went away while the call waited: Call waits for the
	// next one, or says why there is none.
	ctx, cancel := context.WithCancel(telemetry.ContextWith(WithTag(context.Background(), q.tag), spanOf(q.tag)))
	q.started(cancel)
	go func() {
		defer cancel()
		ctx, stop := context.WithTimeout(ctx, left)
		defer stop()
		q.done(u.Call(ctx, q.method, q.params))
	}()
}
