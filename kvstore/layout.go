package kvstore

import (
	"fmt"
	"github.com/kvcosim/kvcosim/internal/names"
)

// KVShape is what the storage layout needs of a model: per token and layer,
// KWidth elements of K and VWidth of V (kv_heads x head_dim each; an MLA
// model caches its latent as K with VWidth 0), of ElemBytes each.
type KVShape struct {
	Layers         int
	KWidth, VWidth int
	ElemBytes      int
}

// TokenIDBytes is the size of a stored token id.
const TokenIDBytes = 4

// BytesPerToken is one token's share of a stored object: its id, and K and
// V of every layer.
func (s KVShape) BytesPerToken() int64 {
	return TokenIDBytes + int64(s.Layers)*int64(s.KWidth+s.VWidth)*int64(s.ElemBytes)
}

// Validate checks the shape.
func (s KVShape) Validate() error {
	if s.Layers < 1 || s.KWidth < 1 || s.VWidth < 0 || s.ElemBytes < 1 {
		return fmt.Errorf("fpga layout: shape %+v: need layers, k_width and elem_bytes >= 1 and v_width >= 0", s)
	}
	return nil
}

// Layout names how a segment of cap tokens is laid out in its bytes.
type Layout int

const (
	// LayoutClaim9 is the patent's: the token ids, then for every layer K
	// in token order, then for every layer V column by column (claim 9).
	LayoutClaim9 Layout = iota
	// LayoutTokenMajor keeps each token's id, K and V together.
	LayoutTokenMajor
	// LayoutLayerMajor keeps, per layer, K then V, both in token order.
	LayoutLayerMajor
)

// Layouts names the values of Layout: Names lists them, Parse reads one.
var Layouts = names.New("layout", map[Layout]string{
	LayoutClaim9:     "claim9",
	LayoutTokenMajor: "token-major",
	LayoutLayerMajor: "layer-major",
})

// String returns the layout's name.
func (l Layout) String() string { return Layouts.Name(l) }

// Extent is a run of bytes: an offset in a segment's byte space or, once
// mapped, an address in external storage.
type Extent struct {
	Addr, Bytes int64
	// Tier is the tier of a pool that holds it (0 in a one-tier store).
	Tier int
}

// extents returns the runs a segment of cap tokens holds for tokens
// [t0, t1), adjacent runs merged.
func (l Layout) extents(s KVShape, cap, t0, t1 int64) []Extent {
	if t1 <= t0 {
		return nil
	}
	n := t1 - t0
	e := int64(s.ElemBytes)
	k, v := int64(s.KWidth)*e, int64(s.VWidth)*e
	layers := int64(s.Layers)
	var out []Extent
	add := func(addr, bytes int64) {
		if bytes == 0 {
			return
		}
		if last := len(out) - 1; last >= 0 && out[last].Addr+out[last].Bytes == addr {
			out[last].Bytes += bytes
			return
		}
		out = append(out, Extent{Addr: addr, Bytes: bytes})
	}
	switch l {
	case LayoutTokenMajor:
		add(t0*s.BytesPerToken(), n*s.BytesPerToken())
	case LayoutLayerMajor:
		add(t0*TokenIDBytes, n*TokenIDBytes)
		for layer := range layers {
			base := cap*TokenIDBytes + layer*cap*(k+v)
			add(base+t0*k, n*k)
			add(base+cap*k+t0*v, n*v)
		}
	default: // claim 9
		add(t0*TokenIDBytes, n*TokenIDBytes)
		kBase := cap * TokenIDBytes
		vBase := kBase + layers*cap*k
		if n == cap { // the whole segment: every run joins the next
			add(kBase, layers*cap*k+layers*int64(s.VWidth)*cap*e)
			break
		}
		for layer := range layers {
			add(kBase+(layer*cap+t0)*k, n*k)
		}
		for col := range layers * int64(s.VWidth) {
			add(vBase+(col*cap+t0)*e, n*e)
		}
	}
	return out
}
