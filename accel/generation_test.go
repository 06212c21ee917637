package accel

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/accel/tinylm"
	"github.com/kvcosim/kvcosim/sim"
)

// turn runs one turn of outputs tokens: prompt fed in chunks of chunk
// tokens on cache, then the decode steps and the closing pass.
func turn(t *testing.T, m *tinylm.Model, cache *tinylm.Cache, prompt []uint32, chunk, outputs int, d Decoding, q *sim.Stream) (*tinylm.Cache, []uint32, []float32) {
	g, err := NewGeneration(m, cache, d, q, outputs)
	require.NoError(t, err)
	for start := 0; start < len(prompt); start += chunk {
		end := min(len(prompt), start+chunk)
		require.NoError(t, g.Prefill(prompt[start:end], end == len(prompt)))
	}
	for !g.Done() {
		require.NoError(t, g.Step())
	}
	c, out, logits, err := g.Finish()
	require.NoError(t, err)
	return c, out, logits
}

// TestResumeEqualsRecompute is the patent's promise at the accelerator: a
// second turn on the first turn's cache (kept, as an import restores it)
// gives the tokens and logits of a recomputation of the whole history,
// bit for bit, for every decoding kind.
func TestResumeEqualsRecompute(t *testing.T) {
	m, err := tinylm.New(tinylm.DefaultConfig())
	require.NoError(t, err)
	streams := sim.NewStreams(7)
	for _, d := range []Decoding{{Kind: Greedy}, {Kind: Sample, TopK: 40, TopP: 0.9}, {Kind: Beam, Beams: 3}} {
		name := fmt.Sprintf("kind %d", d.Kind)
		first := []uint32{5, 9, 200, 31, 7, 7, 450}
		c1, out1, _ := turn(t, m, m.NewCache(), first, 3, 5, d, streams.Stream(name+"/turn0"))
		history := append(slices.Clone(first), out1...)
		require.Equal(t, len(history), c1.Len, "%s: the closing pass computes the last output", name)

		next := []uint32{11, 12, 13}
		_, got, gotLogits := turn(t, m, c1.Clone(c1.Len), next, 2, 6, d, streams.Stream(name+"/turn1"))
		_, want, wantLogits := turn(t, m, m.NewCache(), append(slices.Clone(history), next...), 64, 6, d, streams.Stream(name+"/turn1"))
		require.Equal(t, want, got, name)
		require.Equal(t, wantLogits, gotLogits, name)
	}
}

func TestBeamsKeepTheirOwnCaches(t *testing.T) {
	m, err := tinylm.New(tinylm.Config{Layers: 1, Hidden: 8, Heads: 2, KVHeads: 1, Vocab: 16, FFN: 8, Seed: 3})
	require.NoError(t, err)
	g, err := NewGeneration(m, m.NewCache(), Decoding{Kind: Beam, Beams: 4}, nil, 4)
	require.NoError(t, err)
	require.NoError(t, g.Prefill([]uint32{1, 2, 3}, true))
	for !g.Done() {
		require.NoError(t, g.Step())
	}
	for i, b := range g.beams {
		require.Equal(t, 3+len(b.out)-1, b.cache.Len, "beam %d: prompt and all but its last output", i)
		for j := range i {
			require.NotSame(t, g.beams[j].cache, b.cache, "beams %d and %d share a cache", j, i)
		}
		// the beam's cache is exactly a fresh run of its own tokens
		want := m.NewCache()
		_, err := m.Prefill(want, append([]uint32{1, 2, 3}, b.out[:len(b.out)-1]...))
		require.NoError(t, err)
		require.Equal(t, want, b.cache, "beam %d", i)
	}
}

func TestGenerationErrors(t *testing.T) {
	m, err := tinylm.New(tinylm.DefaultConfig())
	require.NoError(t, err)
	_, err = NewGeneration(m, m.NewCache(), Decoding{Kind: Greedy}, nil, 0)
	require.EqualError(t, err, "generation: 0 output tokens: at least 1")
	_, err = NewGeneration(m, m.NewCache(), Decoding{Kind: Beam, Beams: 0}, nil, 1)
	require.EqualError(t, err, "generation: num_beams = 0: must be at least 1")
	g, err := NewGeneration(m, m.NewCache(), Decoding{Kind: Greedy}, nil, 1)
	require.NoError(t, err)
	_, _, _, err = g.Finish()
	require.EqualError(t, err, "generation: finish after 0 of 1 tokens")
	require.NoError(t, g.Prefill([]uint32{1}, true))
	require.EqualError(t, g.Step(), "generation: step after the last of 1 tokens")
}
