package kernels

import (
	"cmp"
	"slices"
)

// cand is a token: its value and its vocab index.
type cand struct {
	v   float32
	idx int32
}

// before is the operator's order: larger values first, and among equal
// values the lower index (a stable descending sort).
func before(a, b cand) bool { return a.v > b.v || (a.v == b.v && a.idx < b.idx) }

func compareCand(a, b cand) int {
	if before(a, b) {
		return -1
	}
	if before(b, a) {
		return 1
	}
	return 0
}

// rollingTopK returns the k first tokens of vals in the operator's order,
// sorted, and the index of the first NaN in vals (-1 if none). It walks the
// row in segments of segment values, as the kernel does: each segment is
// pre-filtered against the current k-th value (a later token equal to it
// cannot displace it: its index is larger), and the survivors join the
// running top k, which a selection (not a sort) trims back to k at the end
// of a segment that doubled it, or sooner when survivors pile up. buf is
// reused.
func rollingTopK(vals []float32, k, segment int, buf []cand) ([]cand, int) {
	r := runningTopK{top: buf[:0], k: k, limit: max(4*k, 64), nan: -1}
	seed := min(k, len(vals))
	r.offer(vals[:seed], 0)
	r.trim() // k held: the pre-filter starts
	for start := seed; start < len(vals); {
		end := min(start+segment-start%segment, len(vals)) // segment boundaries of the whole row
		r.scan(vals[start:end], start)
		if len(r.top) >= 2*r.k { // the segment's merge: worth a selection
			r.trim()
		}
		start = end
	}
	r.trim()
	slices.SortFunc(r.top, compareCand)
	return r.top, r.nan
}

// runningTopK is the top k so far (unordered), the value a token must
// exceed to enter once k are held, and the first NaN met.
type runningTopK struct {
	top      []cand
	k, limit int
	full     bool
	kth      float32
	nan      int
}

// scan offers a segment (starting at vocab index offset), once k are held,
// eight values at a time: one compare each and a rarely taken branch. A
// NaN fails every compare, so it reaches offer, which records it.
func (r *runningTopK) scan(seg []float32, offset int) {
	kth := r.kth
	for len(seg) >= 8 {
		s := seg[:8]
		if !(s[0] <= kth && s[1] <= kth && s[2] <= kth && s[3] <= kth &&
			s[4] <= kth && s[5] <= kth && s[6] <= kth && s[7] <= kth) {
			r.offer(s, offset)
			kth = r.kth
		}
		seg, offset = seg[8:], offset+8
	}
	r.offer(seg, offset)
}

// offer adds the values that can enter (all of them until k are held),
// and trims when the survivors reach the limit.
func (r *runningTopK) offer(vals []float32, offset int) {
	for i, v := range vals {
		switch {
		case v != v:
			if r.nan < 0 {
				r.nan = offset + i
			}
		case !r.full || v > r.kth:
			r.top = append(r.top, cand{v, int32(offset + i)})
		}
	}
	if len(r.top) >= r.limit {
		r.trim()
	}
}

// trim keeps the k first candidates and raises the entry bar to the k-th.
func (r *runningTopK) trim() {
	if len(r.top) < r.k || (r.full && len(r.top) == r.k) {
		return
	}
	selectFirst(r.top, r.k)
	r.top, r.full, r.kth = r.top[:r.k], true, r.top[r.k-1].v
}

// selectFirst reorders c so that its k first elements (in any order) are
// its k first in the operator's order, the k-th of them at c[k-1]: a
// quickselect with a median-of-three pivot. The order is strict (indices
// differ), so every partition makes progress.
func selectFirst(c []cand, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if before(c[mid], c[lo]) {
			c[mid], c[lo] = c[lo], c[mid]
		}
		if before(c[hi], c[lo]) {
			c[hi], c[lo] = c[lo], c[hi]
		}
		if before(c[hi], c[mid]) {
			c[hi], c[mid] = c[mid], c[hi]
		}
		pivot := c[mid]
		i, j := lo, hi
		for i <= j {
			for before(c[i], pivot) {
				i++
			}
			for before(pivot, c[j]) {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i, j = i+1, j-1
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// fullSort returns every token of vals in the operator's order.
func fullSort(vals []float32, buf []cand) []cand {
	all := buf[:0]
	for i, v := range vals {
		all = append(all, cand{v, int32(i)})
	}
	slices.SortFunc(all, func(a, b cand) int {
		if c := cmp.Compare(b.v, a.v); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	return all
}
