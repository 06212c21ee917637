package kvstore

import (
	"encoding/binary"
	"fmt"
	"math"
)

// KVData is an object's content in functional mode: for tokens [0, N),
// their ids and, per layer, their K and V rows back to back (N x KWidth
// and N x VWidth float32).
type KVData struct {
	IDs  []uint32
	K, V [][]float32
}

// NewKVData returns zeroed content for n tokens of shape s.
func NewKVData(s KVShape, n int64) *KVData {
	d := &KVData{IDs: make([]uint32, n), K: make([][]float32, s.Layers), V: make([][]float32, s.Layers)}
	for l := range s.Layers {
		d.K[l], d.V[l] = make([]float32, n*int64(s.KWidth)), make([]float32, n*int64(s.VWidth))
	}
	return d
}

// functionalShape checks that real bytes can be laid out: float32 elements.
func functionalShape(s KVShape) error {
	if s.ElemBytes != 4 {
		return fmt.Errorf("fpga: functional mode stores float32 K and V: elem_bytes = %d, want 4", s.ElemBytes)
	}
	return nil
}

// offsets says where, in a segment of cap tokens, segment-relative token i
// keeps its id, layer l's K row and layer l's V column col (V rows are
// contiguous except in claim 9, which lays V out column by column).
type offsets struct {
	l    Layout
	s    KVShape
	cap  int64
	k, v int64 // K and V row bytes
}

func (o offsets) id(i int64) int64 {
	if o.l == LayoutTokenMajor {
		return i * o.s.BytesPerToken()
	}
	return i * TokenIDBytes
}

func (o offsets) kRow(layer, i int64) int64 {
	switch o.l {
	case LayoutTokenMajor:
		return i*o.s.BytesPerToken() + TokenIDBytes + layer*(o.k+o.v)
	case LayoutLayerMajor:
		return o.cap*TokenIDBytes + layer*o.cap*(o.k+o.v) + i*o.k
	}
	return o.cap*TokenIDBytes + (layer*o.cap+i)*o.k
}

func (o offsets) vElem(layer, col, i int64) int64 {
	switch o.l {
	case LayoutTokenMajor:
		return o.kRow(layer, i) + o.k + col*4
	case LayoutLayerMajor:
		return o.cap*TokenIDBytes + layer*o.cap*(o.k+o.v) + o.cap*o.k + i*o.v + col*4
	}
	vBase := o.cap*TokenIDBytes + int64(o.s.Layers)*o.cap*o.k
	return vBase + ((layer*int64(o.s.VWidth)+col)*o.cap+i)*4
}

func (l Layout) offsets(s KVShape, cap int64) offsets {
	return offsets{l: l, s: s, cap: cap, k: int64(s.KWidth) * 4, v: int64(s.VWidth) * 4}
}

// Encode returns the bytes a piece's extents hold, in order: tokens
// [p.From, p.To) of data laid out in a segment of p.Cap tokens from
// p.Start. The bytes are the segment's image read along the layout's runs,
// which is how the piece's extents were made.
func (l Layout) Encode(s KVShape, p Piece, data *KVData) ([]byte, error) {
	if err := functionalShape(s); err != nil {
		return nil, err
	}
	if p.To > int64(len(data.IDs)) {
		return nil, fmt.Errorf("fpga: piece of tokens [%d, %d) beyond the %d tokens given", p.From, p.To, len(data.IDs))
	}
	o := l.offsets(s, p.Cap)
	img := make([]byte, p.Cap*s.BytesPerToken())
	le := binary.LittleEndian
	kw, vw := int64(s.KWidth), int64(s.VWidth)
	for t := p.From; t < p.To; t++ {
		i := t - p.Start
		le.PutUint32(img[o.id(i):], data.IDs[t])
		for layer := range int64(s.Layers) {
			for c, x := range data.K[layer][t*kw : t*kw+kw] {
				le.PutUint32(img[o.kRow(layer, i)+int64(c)*4:], math.Float32bits(x))
			}
			for c, x := range data.V[layer][t*vw : t*vw+vw] {
				le.PutUint32(img[o.vElem(layer, int64(c), i):], math.Float32bits(x))
			}
		}
	}
	var out []byte
	for _, run := range l.extents(s, p.Cap, p.From-p.Start, p.To-p.Start) {
		out = append(out, img[run.Addr:run.Addr+run.Bytes]...)
	}
	return out, nil
}

// Decode is Encode's reverse: it fills tokens [p.From, p.To) of data from
// the bytes of the piece's extents, in order.
func (l Layout) Decode(s KVShape, p Piece, b []byte, data *KVData) error {
	if err := functionalShape(s); err != nil {
		return err
	}
	if p.To > int64(len(data.IDs)) {
		return fmt.Errorf("fpga: piece of tokens [%d, %d) beyond the %d tokens to fill", p.From, p.To, len(data.IDs))
	}
	img := make([]byte, p.Cap*s.BytesPerToken())
	at := int64(0)
	for _, run := range l.extents(s, p.Cap, p.From-p.Start, p.To-p.Start) {
		if at+run.Bytes > int64(len(b)) {
			return fmt.Errorf("fpga: piece of tokens [%d, %d): %d bytes, want %d", p.From, p.To, len(b), at+run.Bytes)
		}
		copy(img[run.Addr:], b[at:at+run.Bytes])
		at += run.Bytes
	}
	if at != int64(len(b)) {
		return fmt.Errorf("fpga: piece of tokens [%d, %d): %d bytes, want %d", p.From, p.To, len(b), at)
	}
	o := l.offsets(s, p.Cap)
	le := binary.LittleEndian
	kw, vw := int64(s.KWidth), int64(s.VWidth)
	for t := p.From; t < p.To; t++ {
		i := t - p.Start
		data.IDs[t] = le.Uint32(img[o.id(i):])
		for layer := range int64(s.Layers) {
			k, v := data.K[layer][t*kw:t*kw+kw], data.V[layer][t*vw:t*vw+vw]
			for c := range k {
				k[c] = math.Float32frombits(le.Uint32(img[o.kRow(layer, i)+int64(c)*4:]))
			}
			for c := range v {
				v[c] = math.Float32frombits(le.Uint32(img[o.vElem(layer, int64(c), i):]))
			}
		}
	}
	return nil
}
