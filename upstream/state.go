package upstream

import (
	"encoding/json"
	"math/rand/v2"
	"time"
)

// State is where an upstream is in its lifecycle (seeds 000 and 004).
type State string

// The states of an upstream.
const (
	// StatePending: registered, not connected yet (lazy start, or waiting
	// for approval).
	StatePending State = "PENDING"
	// StateConnecting: an attempt (spawn or dial, initialize, list) is under
	// way.
	StateConnecting State = "CONNECTING"
	// StateConnected: initialized and listed; calls flow.
	StateConnected State = "CONNECTED"
	// StateUnhealthy: connected, but health pings fail; a reconnect follows.
	StateUnhealthy State = "UNHEALTHY"
	// StateDisconnected: stopped on purpose (by an admin, or idle).
	StateDisconnected State = "DISCONNECTED"
	// StateCrashed: the child process exited; a restart follows after backoff.
	StateCrashed State = "CRASHED"
	// StateFailed: the last attempt failed; another follows after backoff,
	// unless the attempts are used up.
	StateFailed State = "FAILED"
	// StateDisabled: administratively disabled; never connected.
	StateDisabled State = "DISABLED"
	// StateNeedsLogin: the upstream answered 401 (or refused a refresh) and
	// no usable token exists; nothing is retried until a person logs in
	// (mcp-hub login, or a client through URL elicitation) or asks for a
	// connect.
	StateNeedsLogin State = "NEEDS_LOGIN"
)

// Status is a snapshot of an upstream's state.
type Status struct {
	Name      string    `json:"name"`
	Transport Transport `json:"transport"`
	State     State     `json:"state"`
	// Since is when the state last changed.
	Since time.Time `json:"since"`
	// LastError is the error that ended the last connection or attempt.
	LastError string `json:"lastError,omitempty"`
	// PID of the child process while one runs (stdio).
	PID int `json:"pid,omitempty"`
	// Tools is the number of tools in the upstream's inventory.
	Tools int `json:"tools"`
	// Instances is the number of per-session instances running (scope
	// session, or auto once switched); 0 for a shared upstream.
	Instances int `json:"instances,omitempty"`
	// Sessions labels the client sessions those instances run for, sorted.
	Sessions []string `json:"sessions,omitempty"`
	// Attempts counts consecutive failed attempts.
	Attempts int `json:"attempts,omitempty"`
	// NextRetry is when the next automatic attempt is due; zero when none
	// is scheduled.
	NextRetry time.Time `json:"nextRetry,omitzero"`
	// Manual is set when an admin disconnected the upstream: it stays down
	// and its tools leave the catalog until it is connected again.
	Manual bool `json:"manual,omitempty"`
	// Idle is set while a stdio upstream is stopped because it was not
	// used for its idle timeout; the next call starts it again, and its
	// tools stay in the catalog meanwhile.
	Idle bool `json:"idle,omitempty"`
	// Settled is set once the first connect attempt has finished (or none
	// will be made). A hub waits for unsettled upstreams before its first
	// tools/list.
	Settled bool `json:"-"`
	// Applied counts the commands (connect, disconnect, restart, enable,
	// disable) whose effect this status shows; compare with
	// [Upstream.CommandsSent].
	Applied uint64 `json:"-"`
	// ServerName, ServerVersion and ProtocolVersion come from initialize.
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Stale is set while the inventory comes from a cache rather than a
	// live listing.
	Stale bool `json:"stale,omitempty"`
	// AuthServer names the authorization server of an upstream in
	// StateNeedsLogin.
	AuthServer string `json:"authServer,omitempty"`
}

// Inventory is what an upstream offers, as raw JSON objects exactly as it
// listed them.
type Inventory struct {
	Tools     []json.RawMessage
	Prompts   []json.RawMessage
	Resources []json.RawMessage
	Templates []json.RawMessage
	// Stale is set when the inventory was loaded from a cache.
	Stale bool
	// Version increases with every change.
	Version uint64
	// SyncedAt is when the upstream was last listed.
	SyncedAt time.Time
	// ServerInfo is the upstream's initialize result (raw), when known.
	ServerInfo json.RawMessage
	// Variants are what per-session instances of the upstream listed that
	// differs from its pins; the hub sets them on the capability cache it
	// saves (an upstream's own listing has none).
	Variants *Variants
}

// Variants are definitions of tools, prompts and resource templates that
// per-session instances of an upstream listed and that no pin of the
// upstream covers: changed since a person approved them, or new. They are
// recorded with the capability cache for a person to review (mcp-hub
// approve); nothing serves them.
type Variants struct {
	Tools     []json.RawMessage `json:"tools,omitempty"`
	Prompts   []json.RawMessage `json:"prompts,omitempty"`
	Templates []json.RawMessage `json:"resourceTemplates,omitempty"`
}

// Backoff is the reconnect schedule: Initial, then ×Multiplier up to Max,
// each delay randomized by ±Jitter; after MaxAttempts consecutive failures
// the upstream stays FAILED until something asks for it.
type Backoff struct {
	Initial     time.Duration
	Multiplier  float64
	Max         time.Duration
	Jitter      float64
	MaxAttempts int
}

// DefaultBackoff is seed 000's schedule.
var DefaultBackoff = Backoff{Initial: 5 * time.Second, Multiplier: 2, Max: 60 * time.Second, Jitter: 0.25, MaxAttempts: 5}

func (b Backoff) withDefaults() Backoff {
	d := DefaultBackoff
	if b.Initial > 0 {
		d.Initial = b.Initial
	}
	if b.Multiplier >= 1 {
		d.Multiplier = b.Multiplier
	}
	if b.Max > 0 {
		d.Max = b.Max
	}
	if b.Jitter > 0 && b.Jitter < 1 {
		d.Jitter = b.Jitter
	}
	if b.MaxAttempts != 0 {
		d.MaxAttempts = b.MaxAttempts
	}
	return d
}

// Delay returns the wait before attempt number n (1-based) is retried.
func (b Backoff) Delay(n int) time.Duration {
	d := float64(b.Initial)
	for i := 1; i < n && d < float64(b.Max); i++ {
		d *= b.Multiplier
	}
	d = min(d, float64(b.Max))
	if b.Jitter > 0 {
		d *= 1 + b.Jitter*(2*rand.Float64()-1)
	}
	return time.Duration(d)
}
