package memory

import (
	"container/heap"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// refOuts is container/heap's view of a flowOuts: the reference its
// moves must match, ties included (which of two requests ending together
// moves decides the commands left in each heap).
type refOuts struct{ q *flowOuts }

func (r refOuts) Len() int           { return r.q.Len() }
func (r refOuts) Less(i, j int) bool { return r.q.less(i, j) }
func (r refOuts) Swap(i, j int)      { r.q.h[i], r.q.h[j] = r.q.h[j], r.q.h[i] }
func (r refOuts) Push(x any)         { r.q.h = append(r.q.h, x.(flowOut)) }
func (r refOuts) Pop() any {
	x := r.q.h[len(r.q.h)-1]
	r.q.h = r.q.h[:len(r.q.h)-1]
	return x
}

// TestFlowOutsMoveAsContainerHeap holds flowOuts' push, pop and init
// against container/heap over random operations with many ties: the
// arrays stay equal element by element.
func TestFlowOutsMoveAsContainerHeap(t *testing.T) {
	for _, latest := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, uint64(map[bool]int{true: 1}[latest])))
		got, want := &flowOuts{latest: latest}, &flowOuts{latest: latest}
		for step := range 20_000 {
			switch op := rng.IntN(10); {
			case op < 5:
				o := flowOut{end: sim.Time(rng.IntN(50)), cmds: int64(rng.IntN(8))}
				got.push(o)
				heap.Push(refOuts{want}, o)
			case op < 9 && got.Len() > 0:
				require.Equal(t, heap.Pop(refOuts{want}), got.pop(), "step %d", step)
			case op == 9:
				rng.Shuffle(len(got.h), func(i, j int) { got.h[i], got.h[j] = got.h[j], got.h[i] })
				want.h = append(want.h[:0], got.h...)
				got.init()
				heap.Init(refOuts{want})
			}
			require.Equal(t, want.h, got.h, "step %d (latest %v)", step, latest)
		}
	}
}
