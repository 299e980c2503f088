// Package era translates MCP messages between the protocol's two eras.
//
// The session era (protocol versions up to 2025-11-25) opens a session with
// initialize; the server sends the client requests of its own (sampling,
// elicitation, roots) while it serves a call; the log level is set once per
// session. The stateless era (2026-07-28, SEP-2575) has no session: every
// request carries in its _meta the protocol version, who the client is and
// what it can do (and, on HTTP, headers that mirror the body); the server
// never sends a request of its own but answers a call with an
// input_required result listing what it needs, and the client calls again
// with the answers (multi round-trip requests, SEP-2322); every result says
// its resultType, and list results say how long they may be cached.
//
// mcp-hub speaks both eras on both sides and translates between them. This
// package holds the translation as pure functions over raw JSON-RPC bytes
// (no I/O, no state), so the hub can forward messages without decoding them
// and a test can check each function against the schema of each revision.
// The hub and the upstream links wire it in.
package era

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// Protocol versions.
const (
	// Stateless is the first (and newest) version of the stateless era.
	Stateless = "2026-07-28"
	// Session is the newest version of the session era.
	Session = "2025-11-25"
)

// SessionVersions are the session-era versions, newest first.
var SessionVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// IsStateless reports whether protocol version v is of the stateless era.
// Versions are dates, so they compare as strings.
func IsStateless(v string) bool { return v >= Stateless }

// Polls reports whether a session-era client of protocol version v knows
// that a server may close a request's response stream before the answer,
// for the client to resume it after the retry delay (SEP-1699, from
// 2025-11-25); an earlier client expects the answer on the stream it
// opened.
func Polls(v string) bool { return v >= "2025-11-25" }

// Keys of the io.modelcontextprotocol/ _meta namespace.
const (
	// ReservedPrefix starts the keys the protocol reserves in _meta. They
	// describe one hop (this client, this server), so a proxy never
	// forwards them: it writes its own.
	ReservedPrefix        = "io.modelcontextprotocol/"
	MetaProtocolVersion   = ReservedPrefix + "protocolVersion"
	MetaClientInfo        = ReservedPrefix + "clientInfo"
	MetaClientCaps        = ReservedPrefix + "clientCapabilities"
	MetaLogLevel          = ReservedPrefix + "logLevel"
	MetaServerInfo        = ReservedPrefix + "serverInfo"
	MetaSubscriptionID    = ReservedPrefix + "subscriptionId"
	MetaRelatedTask       = ReservedPrefix + "related-task"
	metaProtocolVersionKV = `"` + MetaProtocolVersion + `"`
)

// LogLevels are the levels of notifications/message (the syslog
// severities of RFC 5424), least severe first: a client that sets one
// gets the messages at it and at every level after it.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LogLevelRank returns the index of level in LogLevels, or -1 for a name
// that is none.
func LogLevelRank(level string) int {
	for i, l := range LogLevels {
		if l == level {
			return i
		}
	}
	return -1
}

// Error codes of the stateless era.
const (
	CodeHeaderMismatch             = -32020
	CodeMissingClientCapability    = -32021
	CodeUnsupportedProtocolVersion = -32022
	codeMethodNotFound             = -32601
	codeInvalidParams              = -32602
)

// Reserved reports whether a _meta key is one the protocol reserves.
func Reserved(key []byte) bool { return bytes.HasPrefix(key, []byte(ReservedPrefix)) }

// RequestVersion returns the protocol version a request's params carry in
// _meta, or "" (a session-era request, or invalid JSON). It scans params
// only when they mention the key at all.
func RequestVersion(params []byte) string {
	if !bytes.Contains(params, []byte(metaProtocolVersionKV)) {
		return ""
	}
	v := wire.GetMeta(params, MetaProtocolVersion)
	if v == nil {
		return ""
	}
	s, err := wire.String(v)
	if err != nil {
		return ""
	}
	return s
}

// removed are the session-era requests and notifications the stateless era
// no longer has (the 2025-11-25 schema's methods missing from 2026-07-28's,
// tasks aside: they are an extension of their own).
var removed = map[string]bool{
	"initialize":                         true,
	"ping":                               true,
	"logging/setLevel":                   true,
	"resources/subscribe":                true,
	"resources/unsubscribe":              true,
	"notifications/initialized":          true,
	"notifications/roots/list_changed":   true,
	"notifications/elicitation/complete": true,
}

// Removed reports whether method exists in the session era only: a
// stateless-era peer answers it 404 / -32601 (Method not found).
func Removed(method string) bool { return removed[method] }

// StatelessOnly reports whether method exists in the stateless era only.
func StatelessOnly(method string) bool {
	switch method {
	case "server/discover", "subscriptions/listen", "notifications/subscriptions/acknowledged":
		return true
	}
	return false
}

// Status is the HTTP status of a stateless-era answer on the streamable
// HTTP transport (when it is sent as JSON, not as an event stream): a
// method the server does not have is 404, a request that is wrong in
// itself (invalid params, an unsupported version, a missing client
// capability, headers that do not match the body) is 400, anything else
// (results, and errors of the method itself) is 200.
func Status(response []byte) int {
	e, err := wire.Get(response, "error")
	if err != nil || e == nil {
		return http.StatusOK
	}
	code, _ := wire.Get(e, "code")
	switch string(wire.TrimSpace(code)) {
	case strconv.Itoa(codeMethodNotFound):
		return http.StatusNotFound
	case strconv.Itoa(codeInvalidParams), strconv.Itoa(CodeUnsupportedProtocolVersion),
		strconv.Itoa(CodeMissingClientCapability), strconv.Itoa(CodeHeaderMismatch):
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// UnsupportedVersionData is the data of an unsupported-version error:
// {"supported":[…],"requested":"…"}.
func UnsupportedVersionData(supported []string, requested string) []byte {
	b := []byte(`{"supported":[`)
	for i, v := range supported {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, v)
	}
	b = append(b, `],"requested":`...)
	b = wire.AppendString(b, requested)
	return append(b, '}')
}
