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
// sorted. It walks the row in segments of segment values, as the kernel
// does: each segment is pre-filtered against the current k-th value (a
// later token equal to it cannot displace it: its index is larger), and
// only the survivors are merged into the running top k. buf is reused.
func rollingTopK(vals []float32, k, segment int, buf []cand) []cand {
	top := buf[:0]
	var kth cand
	full := false
	for start := 0; start < len(vals); start += segment {
		end := min(start+segment, len(vals))
		n := len(top)
		for i, v := range vals[start:end] {
			if !full || v > kth.v {
				top = append(top, cand{v, int32(start + i)})
			}
		}
		if len(top) == n {
			continue
		}
		slices.SortFunc(top, compareCand)
		if len(top) >= k {
			top, full, kth = top[:k], true, top[k-1]
		}
	}
	return top
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
