package hub

import (
	"net/http"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/prom"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// metrics are the hub's Prometheus metrics, on a registry of their own (no
// global state).
type metrics struct {
	reg       *prom.Registry
	calls     *prom.CounterVec
	latency   *prom.HistogramVec
	sessions  *prom.GaugeVec
	catalog   *prom.GaugeVec
	shadowed  *prom.GaugeVec
	upstreams *prom.GaugeVec
	instances *prom.GaugeVec
	recent    recentCalls // the last calls, for the console (recent.go)
}

// Call outcomes.
const (
	outcomeOK          = "ok"           // the upstream answered with a result
	outcomeToolError   = "tool_error"   // … a result with isError
	outcomeRPCError    = "rpc_error"    // … a JSON-RPC error
	outcomeUnavailable = "unavailable"  // the upstream was not connected
	outcomeTimeout     = "timeout"      // no answer in time
	outcomeFailed      = "failed"       // the connection failed during the call
	outcomeCancelled   = "cancelled"    // the client cancelled
	outcomeUnknownTool = "unknown_tool" // no such tool
)

func newMetrics() *metrics {
	reg := prom.NewRegistry(true)
	m := &metrics{
		reg: reg,
		calls: reg.NewCounterVec("mcphub_calls_total",
			"Forwarded requests by upstream, tool (the method for requests other than tools/call) and outcome.",
			"upstream", "tool", "outcome"),
		latency: reg.NewHistogramVec("mcphub_call_duration_seconds", "Time from a client request to its response, by upstream.",
			[]float64{.0002, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}, "upstream"),
		sessions: reg.NewGaugeVec("mcphub_sessions_active", "Connected client sessions by transport.", "transport"),
		catalog:  reg.NewGaugeVec("mcphub_catalog_items", "Items the hub serves, by kind.", "kind"),
		shadowed: reg.NewGaugeVec("mcphub_catalog_shadowed",
			"Upstream items not served because another upstream (or the hub) owns the name."),
		upstreams: reg.NewGaugeVec("mcphub_upstream_state", "1 for each upstream's current state.", "upstream", "state"),
		instances: reg.NewGaugeVec("mcphub_upstream_instances",
			"Per-session instances of each upstream that runs them (scope session, or auto once switched).", "upstream"),
	}
	for _, tr := range []string{"stdio", "streamable", "sse", "custom"} {
		m.sessions.Add(0, tr) // present at 0 before the first session
	}
	m.shadowed.Set(0)
	return m
}

func (m *metrics) handler() http.Handler { return m.reg.Handler() }

func (m *metrics) call(up, tool, outcome string, d time.Duration) {
	m.calls.Inc(up, tool, outcome)
	m.latency.Observe(d.Seconds(), up)
	m.recent.add(up, tool, outcome, d)
}

func (m *metrics) sessionOpened(transport string) { m.sessions.Add(1, transport) }
func (m *metrics) sessionClosed(transport string) { m.sessions.Add(-1, transport) }

var allStates = []upstream.State{upstream.StatePending, upstream.StateConnecting, upstream.StateConnected,
	upstream.StateUnhealthy, upstream.StateDisconnected, upstream.StateCrashed, upstream.StateFailed, upstream.StateDisabled, upstream.StateNeedsLogin}

// observe records the catalog and upstream states after a rebuild.
func (m *metrics) observe(h *Hub) {
	c := h.Catalog()
	m.catalog.Set(float64(len(c.Tools())), "tool")
	m.shadowed.Set(float64(len(c.Shadowed())))
	m.upstreams.Reset()
	m.instances.Reset()
	for _, u := range h.mgr.List() {
		if u.Scope() != upstream.ScopeShared {
			m.instances.Set(float64(len(u.Instances())), u.Name())
		}
		st := u.Status().State
		for _, s := range allStates {
			v := 0.0
			if s == st {
				v = 1
			}
			m.upstreams.Set(v, u.Name(), string(s))
		}
	}
}
