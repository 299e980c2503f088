package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/wire"
	"github.com/mcp-hub/mcp-hub/telemetry"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// An upstream that speaks the 2026-07-28 protocol does not send sampling,
// elicitation or roots requests: it answers the call with an input_required
// result listing what it needs, and the call is made again with the answers
// (multi-round-trip requests). That routing is exact: the hub asks the
// session that made the call, as the hub's own requests, and retries the
// call upstream with the answers, so the client sees an ordinary call.

// maxInputRounds bounds the rounds of one call.
const maxInputRounds = 8

// inputRequired reports whether a result asks for client input.
func inputRequired(result []byte) bool { return era.InputRequired(result) }

// fulfil answers an input_required result and retries the call until it
// completes (or fails), then finishes the client's request.
func (s *session) fulfil(key, id []byte, up *upstream.Upstream, method, label string, token, params, result []byte, start time.Time, tag *callRef) {
	if s.stateless != nil {
		// A stateless client takes the input_required result itself and
		// calls again with the answers: any replica can serve that call.
		s.passInputRequired(key, id, up, method, label, token, result, start, tag.span)
		return
	}
	ctx, cancel := context.WithCancel(telemetry.ContextWith(upstream.WithTag(s.ctx, tag), tag.span))
	defer cancel()
	s.setCancel(key, cancel)
	// The client's cancel (or the session's end) also ends a pending ask.
	fr := &fwdRequest{cancelled: make(chan struct{})}
	go func() {
		<-ctx.Done()
		fr.once.Do(func() { close(fr.cancelled) })
	}()
	timeout := up.Spec().CallTimeout.Std()
	if timeout <= 0 {
		timeout = s.h.mgr.Options().CallTimeout
	}
	fail := func(msg string) {
		s.finish(key, id, up, method, label, token, upstream.Reply{Result: toolResultError(msg)}, nil, start, tag.span)
	}
	for round := 1; ; round++ {
		if round > maxInputRounds {
			fail(fmt.Sprintf("upstream %q asked for client input more than %d times for one call", up.Name(), maxInputRounds))
			return
		}
		reqs, state, err := era.InputRequests(result)
		if err != nil {
			fail(fmt.Sprintf("upstream %q sent an invalid input_required result: %v", up.Name(), err))
			return
		}
		var answers []wire.Member
		var refusal string
		for _, in := range reqs {
			if refusal = s.mayAsk(up, in.Method, in.Params); refusal != "" {
				if in.Method == "roots/list" && rootsAllowed(up) && s.cannot(in.Method, in.Params) != "" {
					// The client has no roots: the server's configured
					// ones (roots.go).
					refusal = ""
					answers = append(answers, wire.Member{Key: in.Key, Value: configuredRoots(up)})
					continue
				}
				break
			}
			res, errObj, aerr := s.ask(fr, tag.span, in.Method, in.Params, id, timeout)
			if aerr == nil && errObj != nil {
				aerr = fmt.Errorf("the client answered %s with an error: %s", in.Method, errObj)
			}
			if aerr != nil {
				err = aerr
				break
			}
			answers = append(answers, wire.Member{Key: in.Key, Value: res})
		}
		switch {
		case refusal != "":
			fail(refusal)
			return
		case errors.Is(err, errUpstreamCancelled):
			s.finish(key, id, up, method, label, token, upstream.Reply{}, context.Canceled, start, tag.span)
			return
		case err != nil:
			fail(fmt.Sprintf("upstream %q needs client input: %v", up.Name(), err))
			return
		}
		retry, err := era.Retry(params, answers, state)
		if err != nil {
			fail(err.Error())
			return
		}
		r, err := up.Call(ctx, method, retry)
		if err != nil || r.Error != nil || !inputRequired(r.Result) {
			s.finish(key, id, up, method, label, token, r, err, start, tag.span)
			return
		}
		result = r.Result
	}
}

// mayAsk says why an upstream may not have the session asked this (by
// policy, or because the client cannot answer), or "".
func (s *session) mayAsk(up *upstream.Upstream, method string, params []byte) string {
	spec := up.Spec()
	var allow *bool
	switch method {
	case "sampling/createMessage":
		allow = spec.AllowSampling
	case "elicitation/create":
		allow = spec.AllowElicitation
	case "roots/list":
		allow = spec.AllowRoots
	default:
		return fmt.Sprintf("mcp-hub cannot ask clients %s", method)
	}
	if allow != nil && !*allow {
		return fmt.Sprintf("the hub's configuration does not let upstream %q send %s to clients", up.Name(), method)
	}
	return s.cannot(method, params)
}
