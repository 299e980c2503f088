// Package prom is a small Prometheus text-format (version 0.0.4) exposition:
// counters, gauges and histograms with labels, plus the Go runtime and
// process figures an operator expects next to them. It exists so the hub
// does not link client_golang and its protobuf stack for the handful of
// series it exports: replacing client_golang with it took 2.1 MB off the
// binary's loaded segments (all of them resident) and the idle hub's VmRSS
// from 20.1 to 17.4 MB (docs/BENCHMARKS.md, hub memory).
package prom

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Registry holds metric families in registration order and renders them.
// The zero value is not usable; call NewRegistry.
type Registry struct {
	mu       sync.Mutex
	families []family
	start    time.Time
	runtime  bool
}

type family interface {
	write(w *bufio.Writer)
}

// NewRegistry returns an empty registry. With runtime set, every scrape also
// reports go_goroutines, go_threads, heap and process figures.
func NewRegistry(runtime bool) *Registry {
	return &Registry{start: time.Now(), runtime: runtime}
}

func (r *Registry) add(f family) {
	r.mu.Lock()
	r.families = append(r.families, f)
	r.mu.Unlock()
}

// Handler serves the registry in the text exposition format.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		bw := bufio.NewWriter(w)
		r.WriteTo(bw)
		bw.Flush()
	})
}

// WriteTo renders every family to w.
func (r *Registry) WriteTo(w *bufio.Writer) {
	r.mu.Lock()
	fams := slices.Clone(r.families)
	r.mu.Unlock()
	for _, f := range fams {
		f.write(w)
	}
	if r.runtime {
		r.writeRuntime(w)
	}
}

// vec is the label bookkeeping shared by every metric kind: series by the
// joined label values.
type vec[T any] struct {
	name, help, kind string
	labels           []string
	mk               func() *T
	mu               sync.RWMutex
	series           map[string]*T
}

func newVec[T any](name, help, kind string, labels []string, mk func() *T) *vec[T] {
	return &vec[T]{name: name, help: help, kind: kind, labels: labels, mk: mk, series: map[string]*T{}}
}

const sep = "\xff" // cannot appear in valid UTF-8 label values

func (v *vec[T]) with(values []string) *T {
	if len(values) != len(v.labels) {
		panic(fmt.Sprintf("prom: %s takes %d label values, got %d", v.name, len(v.labels), len(values)))
	}
	for i, x := range values {
		if !utf8.ValidString(x) {
			values[i] = strings.ToValidUTF8(x, "\uFFFD")
		}
	}
	key := strings.Join(values, sep)
	v.mu.RLock()
	s, ok := v.series[key]
	v.mu.RUnlock()
	if ok {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok = v.series[key]; !ok {
		s = v.mk()
		v.series[key] = s
	}
	return s
}

// reset drops every series.
func (v *vec[T]) reset() {
	v.mu.Lock()
	v.series = map[string]*T{}
	v.mu.Unlock()
}

// each calls fn for every series, ordered by label values.
func (v *vec[T]) each(w *bufio.Writer, fn func(labels string, s *T)) {
	v.mu.RLock()
	keys := make([]string, 0, len(v.series))
	for k := range v.series {
		keys = append(keys, k)
	}
	v.mu.RUnlock()
	slices.SortFunc(keys, func(a, b string) int { // by label values, in order
		return slices.Compare(strings.Split(a, sep), strings.Split(b, sep))
	})
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", v.name, escapeHelp(v.help), v.name, v.kind)
	for _, k := range keys {
		v.mu.RLock()
		s := v.series[k]
		v.mu.RUnlock()
		if s == nil {
			continue
		}
		var values []string
		if len(v.labels) > 0 {
			values = strings.Split(k, sep)
		}
		fn(labelText(v.labels, values), s)
	}
}

// value is a float64 updated atomically.
type value struct{ bits atomic.Uint64 }

func (x *value) add(d float64) {
	for {
		old := x.bits.Load()
		if x.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}
func (x *value) set(f float64) { x.bits.Store(math.Float64bits(f)) }
func (x *value) get() float64  { return math.Float64frombits(x.bits.Load()) }

// CounterVec is a counter family with labels.
type CounterVec struct{ v *vec[value] }

// NewCounterVec registers a counter family.
func (r *Registry) NewCounterVec(name, help string, labels ...string) *CounterVec {
	c := &CounterVec{newVec(name, help, "counter", labels, func() *value { return new(value) })}
	r.add(c)
	return c
}

// Inc adds one to the series with the given label values.
func (c *CounterVec) Inc(values ...string) { c.v.with(values).add(1) }

func (c *CounterVec) write(w *bufio.Writer) {
	c.v.each(w, func(l string, s *value) { fmt.Fprintf(w, "%s%s %s\n", c.v.name, l, num(s.get())) })
}

// GaugeVec is a gauge family with labels.
type GaugeVec struct{ v *vec[value] }

// NewGaugeVec registers a gauge family; with no labels it is a single gauge.
func (r *Registry) NewGaugeVec(name, help string, labels ...string) *GaugeVec {
	g := &GaugeVec{newVec(name, help, "gauge", labels, func() *value { return new(value) })}
	r.add(g)
	return g
}

// Set sets the series with the given label values.
func (g *GaugeVec) Set(f float64, values ...string) { g.v.with(values).set(f) }

// Add adds d (which may be negative) to the series with the given label values.
func (g *GaugeVec) Add(d float64, values ...string) { g.v.with(values).add(d) }

// Reset drops every series.
func (g *GaugeVec) Reset() { g.v.reset() }

func (g *GaugeVec) write(w *bufio.Writer) {
	g.v.each(w, func(l string, s *value) { fmt.Fprintf(w, "%s%s %s\n", g.v.name, l, num(s.get())) })
}

// HistogramVec is a histogram family with labels and fixed buckets.
type HistogramVec struct {
	v       *vec[histogram]
	buckets []float64
}

type histogram struct {
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sum    value
}

// NewHistogramVec registers a histogram family with the given upper bounds
// (ascending; +Inf is implied).
func (r *Registry) NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	b := slices.Clone(buckets)
	slices.Sort(b)
	h := &HistogramVec{buckets: b}
	h.v = newVec(name, help, "histogram", labels, func() *histogram {
		return &histogram{counts: make([]atomic.Uint64, len(b)+1)}
	})
	r.add(h)
	return h
}

// Observe records f in the series with the given label values.
func (h *HistogramVec) Observe(f float64, values ...string) {
	s := h.v.with(values)
	i, _ := slices.BinarySearch(h.buckets, f) // first bound ≥ f
	s.counts[i].Add(1)
	s.sum.add(f)
}

func (h *HistogramVec) write(w *bufio.Writer) {
	h.v.each(w, func(l string, s *histogram) {
		var cum uint64
		for i := range s.counts {
			cum += s.counts[i].Load()
			le := "+Inf"
			if i < len(h.buckets) {
				le = num(h.buckets[i])
			}
			fmt.Fprintf(w, "%s_bucket%s %d\n", h.v.name, withLabel(l, "le", le), cum)
		}
		fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", h.v.name, l, num(s.sum.get()), h.v.name, l, cum)
	})
}

// writeRuntime reports the Go runtime and the process.
func (r *Registry) writeRuntime(w *bufio.Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	threads, _ := runtime.ThreadCreateProfile(nil)
	one := func(name, kind, help string, f float64) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, kind, name, num(f))
	}
	one("go_goroutines", "gauge", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	one("go_threads", "gauge", "Number of OS threads created.", float64(threads))
	one("go_memstats_heap_alloc_bytes", "gauge", "Bytes of allocated heap objects.", float64(ms.HeapAlloc))
	one("go_memstats_sys_bytes", "gauge", "Bytes of memory obtained from the OS.", float64(ms.Sys))
	one("go_gc_cycles_total", "counter", "Completed GC cycles.", float64(ms.NumGC))
	if cpu, ok := cpuSeconds(); ok {
		one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", cpu)
	}
	if rss, ok := residentBytes(); ok {
		one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", rss)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		one("process_open_fds", "gauge", "Number of open file descriptors.", float64(len(fds)))
	}
	one("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", float64(r.start.UnixNano())/1e9)
}

// residentBytes reads the resident set from /proc/self/statm (Linux).
func residentBytes() (float64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return 0, false
	}
	return pages * float64(os.Getpagesize()), true
}

// num formats a sample value as the exposition format wants it.
func num(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func labelText(names, values []string) string {
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteString(`="`)
		b.WriteString(escapeLabel(values[i]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// withLabel appends one label to a rendered label set.
func withLabel(l, name, val string) string {
	pair := name + `="` + escapeLabel(val) + `"`
	if l == "" {
		return "{" + pair + "}"
	}
	return l[:len(l)-1] + "," + pair + "}"
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
