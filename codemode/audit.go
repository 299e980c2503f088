package codemode

import (
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// CallLog records a script's inner calls for the audit log. It is safe for
// concurrent use.
type CallLog struct {
	mu    sync.Mutex
	calls []CallRecord
}

// CallRecord is one inner call.
type CallRecord struct {
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
	MS      int64  `json:"ms"`
	// Withheld is set when Server or Tool is empty because the script
	// named no server, or no tool, of the hub (see AuditDetail).
	Withheld bool `json:"withheld,omitempty"`
}

// maxAuditCalls bounds the inner calls one audit entry lists (the rest are
// counted).
const maxAuditCalls = 1000

// Add records a call.
func (l *CallLog) Add(server, tool, outcome string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, CallRecord{Server: server, Tool: tool, Outcome: outcome, MS: d.Milliseconds()})
}

// Len returns the calls recorded.
func (l *CallLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// AuditDetail is the audit entry of a finished script: its hash, outcome,
// wall time, why it stopped, and each inner call in order (the first 1000;
// the rest counted).
//
// It keeps nothing the script made up, as that may hold what a tool
// returned (a secret the script read, passed on to the log): a server
// name is kept when known reports it is one of the hub's, a tool name when
// it is a tool of that server; the message of an error the script threw
// is not kept, only that it failed.
func (l *CallLog) AuditDetail(hash string, res *Result, outcome string, err error, known func(server, tool string) (isServer, isTool bool)) map[string]any {
	l.mu.Lock()
	calls := l.calls
	l.mu.Unlock()
	d := map[string]any{"sha256": hash, "outcome": outcome, "calls": len(calls)}
	if len(calls) > maxAuditCalls {
		d["callsOmitted"] = len(calls) - maxAuditCalls
		calls = calls[:maxAuditCalls]
	}
	kept := make([]CallRecord, len(calls))
	for i, c := range calls {
		isServer, isTool := known(c.Server, c.Tool)
		if !isServer {
			c.Server, c.Withheld = "", true
		}
		if !isServer || !isTool {
			c.Tool, c.Withheld = "", true
		}
		kept[i] = c
	}
	d["inner"] = kept
	if res != nil {
		d["ms"] = res.Elapsed.Milliseconds()
	}
	var se *ScriptError
	switch {
	case errors.As(err, &se):
		d["error"] = "the script failed (its error message is not kept: it may hold what tools returned)"
	case err != nil:
		d["error"] = err.Error()
	}
	return d
}

// ProtocolErrorOf decodes a JSON-RPC error object.
func ProtocolErrorOf(errObj []byte) error {
	var pe ProtocolError
	if err := json.Unmarshal(errObj, &pe); err != nil {
		return &ProtocolError{Message: string(errObj)}
	}
	return &pe
}

// SearchHits returns the tools of a hub_search_tools result (its
// structuredContent's tools), or its error text.
func SearchHits(result []byte) (json.RawMessage, error) {
	var r struct {
		IsError           bool `json:"isError"`
		Content           []struct{ Text string }
		StructuredContent struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, err
	}
	if r.IsError || r.StructuredContent.Tools == nil {
		msg := "searchTools failed"
		if len(r.Content) > 0 {
			msg = r.Content[0].Text
		}
		return nil, errors.New(msg)
	}
	return r.StructuredContent.Tools, nil
}
