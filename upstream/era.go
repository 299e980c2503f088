package upstream

import (
	"encoding/json"
	"sync"

	"github.com/mcp-hub/mcp-hub/era"
	"github.com/mcp-hub/mcp-hub/internal/wire"
)

// The hub negotiates the newest protocol era an upstream speaks: go-sdk
// asks with server/discover first (on HTTP with the MCP-Protocol-Version
// header the stateless era requires) and falls back to initialize. On a
// stateless-era (2026-07-28) connection every request the hub sends
// carries the per-request _meta (package era): the protocol version, the
// hub as the client, the capabilities of the client the hub asks for (a
// [Requester] tag says them), the log level it wants; on HTTP it travels
// as a POST of its own with the standard headers and no session.

// Requester is implemented by the tag of a request ([WithTag],
// [Conn.Start]) that is made for someone: on a stateless-era connection,
// EraClient says who the upstream sees asking (the capabilities it may ask
// input for, the log level). nil means the hub's own defaults.
type Requester interface {
	EraClient(c *Conn) *era.Client
}

// connEra is what a connection knows of its protocol era.
type connEra struct {
	stateless bool        // the upstream negotiated 2026-07-28 or later
	client    *era.Client // the hub's own client description

	mu     sync.Mutex
	params map[string][]era.ParamHeader // tool name → its x-mcp-header annotations
}

// Stateless reports whether the connection speaks the stateless era.
func (c *Conn) Stateless() bool { return c.era.stateless }

// ProtocolVersion returns the negotiated protocol version.
func (c *Conn) ProtocolVersion() string {
	if c.init == nil {
		return ""
	}
	return c.init.ProtocolVersion
}

// setEra records the negotiated version and the hub's client description.
func (c *Conn) setEra(version string, info []byte) {
	c.era.stateless = era.IsStateless(version)
	c.era.client = &era.Client{Version: version, Info: info}
}

// prepare returns the params of a request for the connection's era: on a
// stateless-era connection the per-request _meta of the client tag stands
// for (or of the hub), unless the request already carries a version (go-sdk
// writes its own); unchanged otherwise.
func (c *Conn) prepare(params []byte, tag any) ([]byte, error) {
	if !c.era.stateless || c.era.client == nil {
		return params, nil
	}
	if era.RequestVersion(params) != "" {
		return params, nil
	}
	cl := c.era.client
	if r, ok := tag.(Requester); ok {
		if x := r.EraClient(c); x != nil {
			cl = x
		}
	}
	return era.Request(params, cl)
}

// Client returns the hub's client description on this connection (the
// version, the hub's implementation info), for a Requester to fill in.
func (c *Conn) Client() era.Client {
	if c.era.client == nil {
		return era.Client{}
	}
	return *c.era.client
}

// noteParamHeaders records the x-mcp-header annotations of listed tools,
// so the HTTP link can mirror their arguments into headers.
func (c *Conn) noteParamHeaders(tools map[string][]era.ParamHeader) {
	c.era.mu.Lock()
	c.era.params = tools
	c.era.mu.Unlock()
}

// paramHeaders returns the annotations of tool, or nil.
func (c *Conn) paramHeaders(tool string) []era.ParamHeader {
	c.era.mu.Lock()
	defer c.era.mu.Unlock()
	return c.era.params[tool]
}

// healthMethod is the request that proves the upstream alive: ping in the
// session era; the stateless era has none, so server/discover.
func (c *Conn) healthMethod() string {
	if c.era.stateless {
		return "server/discover"
	}
	return "ping"
}

// keepValidTools drops the tools whose x-mcp-header annotations break the
// rules (a client of a stateless-era server must not offer them: their
// arguments cannot be mirrored into headers as the server expects, and the
// hub's own HTTP clients would have to reject them), logs why, and records
// the annotations of the others for the HTTP link.
func (c *Conn) keepValidTools(tools []json.RawMessage) []json.RawMessage {
	notes := map[string][]era.ParamHeader{}
	kept := tools[:0:0]
	for _, t := range tools {
		schema, _ := wire.Get(t, "inputSchema")
		ph, err := era.ParamHeaders(schema)
		name := ""
		if v, _ := wire.Get(t, "name"); v != nil {
			name, _ = wire.String(v)
		}
		if err != nil {
			c.logger.Warn("upstream tool left out: its definition is invalid", "tool", name, "err", err)
			continue
		}
		if len(ph) > 0 {
			notes[name] = ph
		}
		kept = append(kept, t)
	}
	c.noteParamHeaders(notes)
	return kept
}
