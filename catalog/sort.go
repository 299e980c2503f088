package catalog

import "math/bits"

// workSorter orders tools or prompts by (name, rank, original, seq) and
// returns the order as indices into ws. It sorts by the packed name keys a
// word (8 name bytes) at a time, with an LSD radix sort of each word, so
// that it rarely compares strings; small and tied ranges are sorted by
// comparison. All elements are distinct (seq is unique), so the order is
// total and the result deterministic.
type workSorter struct {
	ws           []sortWork
	side         []workItem
	order        []int32
	pairs, ptemp []wordPair
}

type wordPair struct {
	w uint64 // one word of the nameKey
	i int32  // index in ws
}

// radixCutoff is the range size up to which comparison sorting wins.
const radixCutoff = 32

func (s *workSorter) sort() []int32 {
	n := len(s.ws)
	s.order = make([]int32, n)
	for i := range s.order {
		s.order[i] = int32(i)
	}
	if n > radixCutoff {
		s.pairs = make([]wordPair, n)
		s.ptemp = make([]wordPair, n)
	}
	s.byWord(0, n, 0)
	s.pairs, s.ptemp = nil, nil
	return s.order
}

// byWord sorts order[lo:hi], whose elements share key words before w.
func (s *workSorter) byWord(lo, hi, w int) {
	n := hi - lo
	if n <= radixCutoff || w >= len(nameKey{}) {
		s.compare(lo, hi)
		return
	}
	ps, tmp := s.pairs[lo:hi], s.ptemp[lo:hi]
	var count [8][256]int32
	for j, i := range s.order[lo:hi] {
		v := s.ws[i].k[w]
		ps[j] = wordPair{v, i}
		for b := range count {
			count[b][byte(v>>(8*b))]++
		}
	}
	for b := range count {
		c := &count[b]
		if int(c[byte(ps[0].w>>(8*b))]) == n {
			continue // every element has this digit
		}
		var pos [256]int32
		sum := int32(0)
		for d, k := range c {
			pos[d] = sum
			sum += k
		}
		for _, p := range ps {
			d := byte(p.w >> (8 * b))
			tmp[pos[d]] = p
			pos[d]++
		}
		ps, tmp = tmp, ps
	}
	for j := range ps {
		s.order[lo+j] = ps[j].i
	}
	for j := 0; j < n; {
		v := ps[j].w
		k := j + 1
		for k < n && ps[k].w == v {
			k++
		}
		if k-j > 1 {
			if v&0xff == 0 {
				// The names end within this word: they are equal.
				s.compare(lo+j, lo+k)
			} else {
				s.byWord(lo+j, lo+k, w+1)
			}
		}
		j = k
	}
}

func (s *workSorter) less(i, j int32) bool {
	a, b := &s.ws[i], &s.ws[j]
	for w := range a.k {
		if a.k[w] != b.k[w] {
			return a.k[w] < b.k[w]
		}
	}
	// Equal keys: the names are equal unless both are longer than the key.
	if len(a.name) > keyBytes && len(b.name) > keyBytes && a.name != b.name {
		return a.name < b.name
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	if ka, kb := s.side[i].orig, s.side[j].orig; ka != kb {
		return ka < kb
	}
	return i < j
}

func (s *workSorter) swap(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] }

// compare sorts order[lo:hi] by comparison.
func (s *workSorter) compare(lo, hi int) {
	s.quick(lo, hi, 2*bits.Len(uint(hi-lo)))
}

// quick is an introsort of order[lo:hi]: quicksort with a median-of-three
// pivot, insertion sort for short ranges, heapsort after depth levels.
func (s *workSorter) quick(lo, hi, depth int) {
	o := s.order
	for hi-lo > 12 {
		if depth == 0 {
			s.heap(lo, hi)
			return
		}
		depth--
		p := s.partition(lo, hi)
		if p-lo < hi-p {
			s.quick(lo, p, depth)
			lo = p + 1
		} else {
			s.quick(p+1, hi, depth)
			hi = p
		}
	}
	for i := lo + 1; i < hi; i++ {
		for j := i; j > lo && s.less(o[j], o[j-1]); j-- {
			s.swap(j, j-1)
		}
	}
}

// partition partitions order[lo:hi] around the median of its first, middle
// and last elements and returns the pivot's final index.
func (s *workSorter) partition(lo, hi int) int {
	o := s.order
	m := int(uint(lo+hi) >> 1)
	a, c := lo, hi-1
	if s.less(o[m], o[a]) {
		s.swap(a, m)
	}
	if s.less(o[c], o[m]) {
		s.swap(m, c)
		if s.less(o[m], o[a]) {
			s.swap(a, m)
		}
	}
	s.swap(lo, m)
	pivot := o[lo]
	i, j := lo+1, hi-1
	for {
		for i <= j && s.less(o[i], pivot) {
			i++
		}
		for i <= j && s.less(pivot, o[j]) {
			j--
		}
		if i > j {
			break
		}
		s.swap(i, j)
		i++
		j--
	}
	s.swap(lo, j)
	return j
}

func (s *workSorter) heap(lo, hi int) {
	n := hi - lo
	for i := (n - 1) / 2; i >= 0; i-- {
		s.siftDown(lo, i, n)
	}
	for i := n - 1; i > 0; i-- {
		s.swap(lo, lo+i)
		s.siftDown(lo, 0, i)
	}
}

func (s *workSorter) siftDown(lo, root, n int) {
	o := s.order
	for {
		child := 2*root + 1
		if child >= n {
			return
		}
		if child+1 < n && s.less(o[lo+child], o[lo+child+1]) {
			child++
		}
		if !s.less(o[lo+root], o[lo+child]) {
			return
		}
		s.swap(lo+root, lo+child)
		root = child
	}
}
