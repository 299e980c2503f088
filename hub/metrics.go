package hub

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// metrics are the hub's Prometheus metrics, on a registry of their own (no
// global state).
type metrics struct {
	reg       *prometheus.Registry
	calls     *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	sessions  *prometheus.GaugeVec
	catalog   *prometheus.GaugeVec
	shadowed  prometheus.Gauge
	upstreams *prometheus.GaugeVec
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
	m := &metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "mcphub", Name: "calls_total", Help: "Forwarded requests by upstream, tool (the method for requests other than tools/call) and outcome.",
		}, []string{"upstream", "tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "mcphub", Name: "call_duration_seconds", Help: "Time from a client request to its response, by upstream.",
			Buckets: []float64{.0002, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"upstream"}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "mcphub", Name: "sessions_active", Help: "Connected client sessions by transport.",
		}, []string{"transport"}),
		catalog: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "mcphub", Name: "catalog_items", Help: "Items the hub serves, by kind.",
		}, []string{"kind"}),
		shadowed: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "mcphub", Name: "catalog_shadowed", Help: "Upstream items not served because another upstream (or the hub) owns the name.",
		}),
		upstreams: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "mcphub", Name: "upstream_state", Help: "1 for each upstream's current state.",
		}, []string{"upstream", "state"}),
	}
	for _, tr := range []string{"stdio", "streamable", "sse", "custom"} {
		m.sessions.WithLabelValues(tr) // present at 0 before the first session
	}
	m.reg.MustRegister(m.calls, m.latency, m.sessions, m.catalog, m.shadowed, m.upstreams,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *metrics) call(up, tool, outcome string, d time.Duration) {
	m.calls.WithLabelValues(up, tool, outcome).Inc()
	m.latency.WithLabelValues(up).Observe(d.Seconds())
}

func (m *metrics) sessionOpened(transport string) { m.sessions.WithLabelValues(transport).Inc() }
func (m *metrics) sessionClosed(transport string) { m.sessions.WithLabelValues(transport).Dec() }

var allStates = []upstream.State{upstream.StatePending, upstream.StateConnecting, upstream.StateConnected,
	upstream.StateUnhealthy, upstream.StateDisconnected, upstream.StateCrashed, upstream.StateFailed, upstream.StateDisabled}

// observe records the catalog and upstream states after a rebuild.
func (m *metrics) observe(h *Hub) {
	c := h.Catalog()
	m.catalog.WithLabelValues("tool").Set(float64(len(c.Tools())))
	m.shadowed.Set(float64(len(c.Shadowed())))
	m.upstreams.Reset()
	for _, u := range h.mgr.List() {
		st := u.Status().State
		for _, s := range allStates {
			v := 0.0
			if s == st {
				v = 1
			}
			m.upstreams.WithLabelValues(u.Name(), string(s)).Set(v)
		}
	}
}
