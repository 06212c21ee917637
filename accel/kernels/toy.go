package kernels

// The toy language model of the golden vectors (testdata/vectors/FORMAT.md):
// integer hashing and float operations exact in float32, so its logits are
// reproducible bit for bit in any language.

// Mix64 is the splitmix64 finaliser.
func Mix64(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// PrefixHash hashes a token prefix from a seed.
func PrefixHash(seed uint64, tokens []int) uint64 {
	h := Mix64(seed)
	for _, t := range tokens {
		h = Mix64(h ^ uint64(t))
	}
	return h
}

// ToyModel is the golden vectors' deterministic model.
type ToyModel struct {
	Seed              uint64
	Vocab             int
	Scale             float64 // a power of two
	EOS               []int
	EOSBias, EOSSlope float64 // multiples of 1/16, |value| < 16
}

// Logits returns the next-token logits after tokens: a 20-bit hash per
// token id mapped to [-8, 8) in steps of 2^-16, times the scale, with the
// EOS ids shifted by bias + slope x length.
func (m ToyModel) Logits(tokens []int) []float32 {
	h := PrefixHash(m.Seed, tokens)
	out := make([]float32, m.Vocab)
	for v := range out {
		u := Mix64(h+uint64(v)) >> 44
		l := (float64(u) - 524288) / 65536 * m.Scale
		for _, e := range m.EOS {
			if e == v {
				l += m.EOSBias + m.EOSSlope*float64(len(tokens))
			}
		}
		out[v] = float32(l)
	}
	return out
}
