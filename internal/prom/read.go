package prom

import "strings"

// Reading series back, for a program that shows its own metrics (the web
// console's per-server rates) without parsing the exposition.

// Each calls fn with the label values and the value of every series.
func (c *CounterVec) Each(fn func(values []string, v float64)) {
	c.v.read(func(values []string, s *value) { fn(values, s.get()) })
}

// Each calls fn with the label values, the count of observations and their
// sum of every series.
func (h *HistogramVec) Each(fn func(values []string, count uint64, sum float64)) {
	h.v.read(func(values []string, s *histogram) {
		var n uint64
		for i := range s.counts {
			n += s.counts[i].Load()
		}
		fn(values, n, s.sum.get())
	})
}

// read calls fn for every series, in no order, outside the lock.
func (v *vec[T]) read(fn func(values []string, s *T)) {
	v.mu.RLock()
	keys := make([]string, 0, len(v.series))
	series := make([]*T, 0, len(v.series))
	for k, s := range v.series {
		keys = append(keys, k)
		series = append(series, s)
	}
	v.mu.RUnlock()
	for i, k := range keys {
		var values []string
		if len(v.labels) > 0 {
			values = strings.Split(k, sep)
		}
		fn(values, series[i])
	}
}
