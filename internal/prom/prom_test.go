package prom

import (
	"bufio"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func render(r *Registry) string {
	var b strings.Builder
	w := bufio.NewWriter(&b)
	r.WriteTo(w)
	w.Flush()
	return b.String()
}

func TestExposition(t *testing.T) {
	r := NewRegistry(false)
	c := r.NewCounterVec("x_calls_total", "Calls by tool.\nSecond line \\ here.", "tool", "outcome")
	g := r.NewGaugeVec("x_up", "Up.")
	h := r.NewHistogramVec("x_seconds", "Latency.", []float64{1, 0.1}, "up")
	c.Inc("b", "ok")
	c.Inc("a", "ok")
	c.Inc("a", "ok")
	c.Inc("q\"uote\\back\nline", "err")
	c.Inc("bad\xffutf8", "ok")
	g.Set(3)
	g.Add(-1.5)
	h.Observe(0.05, "u")
	h.Observe(0.1, "u") // on a bound: counted in that bucket
	h.Observe(0.5, "u")
	h.Observe(7, "u")
	want := `# HELP x_calls_total Calls by tool.\nSecond line \\ here.
# TYPE x_calls_total counter
x_calls_total{tool="a",outcome="ok"} 2
x_calls_total{tool="b",outcome="ok"} 1
x_calls_total{tool="bad�utf8",outcome="ok"} 1
x_calls_total{tool="q\"uote\\back\nline",outcome="err"} 1
# HELP x_up Up.
# TYPE x_up gauge
x_up 1.5
# HELP x_seconds Latency.
# TYPE x_seconds histogram
x_seconds_bucket{up="u",le="0.1"} 2
x_seconds_bucket{up="u",le="1"} 3
x_seconds_bucket{up="u",le="+Inf"} 4
x_seconds_sum{up="u"} 7.65
x_seconds_count{up="u"} 4
`
	if got := render(r); got != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, want)
	}
	g.Reset()
	if got := render(r); strings.Contains(got, "\nx_up ") || !strings.Contains(got, "# TYPE x_up gauge") {
		t.Errorf("after Reset the gauge keeps its header and loses its series:\n%s", got)
	}
}

func TestLabelCountMismatchPanics(t *testing.T) {
	r := NewRegistry(false)
	c := r.NewCounterVec("x_total", "X.", "a", "b")
	defer func() {
		if recover() == nil {
			t.Error("Inc with the wrong number of label values did not panic")
		}
	}()
	c.Inc("only-one")
}

func TestConcurrentUpdatesAndScrapes(t *testing.T) {
	r := NewRegistry(true)
	c := r.NewCounterVec("x_total", "X.", "k")
	h := r.NewHistogramVec("x_seconds", "X.", []float64{0.5}, "k")
	g := r.NewGaugeVec("x_g", "X.", "k")
	const workers, n = 8, 2000
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := string(rune('a' + i%3))
			for range n {
				c.Inc(k)
				h.Observe(0.25, k)
				g.Add(1, k)
				g.Add(-1, k)
			}
		}()
	}
	for range 20 {
		render(r)
	}
	wg.Wait()
	out := render(r)
	for _, line := range []string{`x_total{k="a"} 6000`, `x_total{k="b"} 6000`, `x_total{k="c"} 4000`,
		`x_seconds_count{k="a"} 6000`, `x_seconds_sum{k="a"} 1500`, `x_g{k="a"} 0`, "go_goroutines ", "process_cpu_seconds_total "} {
		if !strings.Contains(out, line) {
			t.Errorf("missing %q in:\n%s", line, out)
		}
	}
}

func TestHandler(t *testing.T) {
	r := NewRegistry(true)
	r.NewCounterVec("x_total", "X.").Inc()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	body := rec.Body.String()
	for _, s := range []string{"x_total 1\n", "process_resident_memory_bytes ", "process_open_fds "} {
		if !strings.Contains(body, s) {
			t.Errorf("missing %q", s)
		}
	}
}
