package kvstore

// Piece is a run of an object's tokens that lies in one segment, for
// functional mode: the segment's first token and capacity, the tokens
// [From, To), and the storage extents that hold them, in layout order.
type Piece struct {
	Start, Cap, From, To int64
	Extents              []Extent
}

// Pieces returns where tokens [from, k.Tokens) of the object stored under
// k lie, in token order; false if k is not stored. It changes nothing (no
// access time, no statistics).
func (d *Directory) Pieces(k Key, from int64) ([]Piece, bool) {
	id, _ := d.find(k)
	if id == none {
		return nil, false
	}
	var chain []int32
	for s := d.links.at(id).lastSeg; s != none; s = d.segs.at(s).prev {
		chain = append(chain, s)
	}
	var out []Piece
	for i := len(chain) - 1; i >= 0; i-- {
		seg := d.segs.at(chain[i])
		start, end := seg.start, seg.start+seg.cap
		t0, t1 := max(from, start), min(k.Tokens, end)
		if t0 < t1 {
			out = append(out, Piece{Start: start, Cap: seg.cap, From: t0, To: t1, Extents: d.segExtents(chain[i], t0, t1, nil)})
		}
	}
	return out, true
}
