package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// busy takes every in-flight slot of u, as calls running would; the
// returned func gives one back the way a finished call does.
func busy(u *Upstream) (free func()) {
	for range cap(u.inflight) {
		u.inflight <- struct{}{}
	}
	return u.release
}

type callOutcome struct {
	r   Reply
	err error
}

func startCall(t *testing.T, u *Upstream, tool, args string) (cancel func(), done <-chan callOutcome) {
	t.Helper()
	ch := make(chan callOutcome, 1)
	cancel, ok := u.TryStart("tools/call", []byte(`{"name":"`+tool+`","arguments":`+args+`}`), func(r Reply, err error) {
		ch <- callOutcome{r, err}
	})
	if !ok {
		t.Fatal("TryStart refused a call to a connected upstream")
	}
	return cancel, ch
}

func wait(t *testing.T, ch <-chan callOutcome) callOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(20 * time.Second):
		t.Fatal("the call never ended")
		return callOutcome{}
	}
}

func TestQueueWaitsForASlot(t *testing.T) {
	opts := fastOptions(t)
	opts.MaxInFlight = 2
	m := newManager(t, opts)
	u, err := m.Add(stdioSpec("fx", "-only", "echo,counter"), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 10*time.Second, StateConnected)

	t.Run("a queued call starts when a slot comes free, first come first served", func(t *testing.T) {
		free := busy(u)
		var calls []<-chan callOutcome
		for i := range 4 {
			_, ch := startCall(t, u, "echo", fmt.Sprintf(`{"i":%d}`, i))
			calls = append(calls, ch)
		}
		if !u.waiting() {
			t.Fatal("with every slot busy, the calls were not queued")
		}
		for _, ch := range calls {
			select {
			case o := <-ch:
				t.Fatalf("a call ended while every slot was busy: %s %v", o.r.Result, o.err)
			default:
			}
		}
		// One slot at a time: each release starts exactly the next call.
		for i, ch := range calls {
			free()
			o := wait(t, ch)
			if o.err != nil || !strings.Contains(string(o.r.Result), fmt.Sprintf(`\"i\":%d`, i)) {
				t.Fatalf("call %d: %s %v (out of order or failed)", i, o.r.Result, o.err)
			}
			if i+1 < len(calls) {
				u.inflight <- struct{}{} // the slot the call gave back, taken again
			}
		}
		free() // the last of busy's slots
		if u.waiting() || len(u.inflight) != 0 {
			t.Errorf("after all: queued %v, slots in use %d", u.waiting(), len(u.inflight))
		}
	})

	t.Run("a withdrawn queued call is never sent", func(t *testing.T) {
		free := busy(u)
		cancel, ch := startCall(t, u, "counter", `{}`)
		cancel()
		if o := wait(t, ch); !errors.Is(o.err, context.Canceled) {
			t.Errorf("withdrawn call ended with %s %v, want context.Canceled", o.r.Result, o.err)
		}
		cancel() // twice: nothing more happens
		free()
		free()
		if got := callText(t, u, "counter", `{}`); !strings.Contains(got, `"1"`) && !strings.Contains(got, `"text":"1"`) {
			t.Errorf("counter after a withdrawn call = %s, want 1 (the withdrawn call ran)", got)
		}
	})

	t.Run("a queued call survives a reconnect", func(t *testing.T) {
		free := busy(u)
		_, ch := startCall(t, u, "echo", `{"after":"restart"}`)
		old := u.Conn()
		if err := m.Restart("fx"); err != nil {
			t.Fatal(err)
		}
		for u.Conn() == old || u.Status().State != StateConnected {
			time.Sleep(10 * time.Millisecond)
		}
		free()
		free()
		if o := wait(t, ch); o.err != nil || !strings.Contains(string(o.r.Result), "restart") {
			t.Errorf("queued call across a restart: %s %v", o.r.Result, o.err)
		}
	})
}

func TestQueueTimeout(t *testing.T) {
	opts := fastOptions(t)
	opts.MaxInFlight = 1
	opts.CallTimeout = 200 * time.Millisecond
	m := newManager(t, opts)
	u, err := m.Add(stdioSpec("fx", "-only", "echo"), AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, u, 10*time.Second, StateConnected)
	free := busy(u)
	defer free()
	_, ch := startCall(t, u, "echo", `{}`)
	o := wait(t, ch)
	if !errors.Is(o.err, ErrTimeout) || !strings.Contains(o.err.Error(), "waiting for a free slot (maxInFlight 1)") {
		t.Errorf("queued past the call timeout: %v, want ErrTimeout waiting for a free slot", o.err)
	}
	if u.waiting() {
		t.Error("the timed-out call is still queued")
	}
}
