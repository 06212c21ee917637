// Package kernels implements the accelerator's decoding kernels as plain
// Go on slices: the TopK-TopP-MinP-Sample operator (Ascend's
// aclnnTopKTopPSample V1 and V2 semantics), beam search with the exact
// semantics of Hugging Face transformers 4.38.2, the toy model that golden
// vectors use, and cost models (bytes and operations per call) for the
// simulator. It does not import the simulator.
package kernels

import (
	"fmt"
	"math"
)

// DType is the element type the operator's logits are held in. Values are
// rounded to it exactly as the device holds them, then computed in float32.
type DType int

// The supported logits types.
const (
	Float32 DType = iota
	Float16
	BFloat16
)

var dtypeNames = []string{"float32", "float16", "bfloat16"}

func (d DType) String() string { return dtypeNames[d] }

// ParseDType reads a dtype name.
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("unknown dtype %q: valid dtypes are float32, float16, bfloat16", s)
}

// Bytes is the element size.
func (d DType) Bytes() int {
	if d == Float32 {
		return 4
	}
	return 2
}

// Round returns x as the dtype holds it (round to nearest, ties to even).
func (d DType) Round(x float32) float32 {
	switch d {
	case Float16:
		return roundFloat16(x)
	case BFloat16:
		return roundBFloat16(x)
	}
	return x
}

// roundBFloat16 keeps the top 16 bits of a float32, rounding to nearest even.
func roundBFloat16(x float32) float32 {
	if math.IsNaN(float64(x)) {
		return x
	}
	b := math.Float32bits(x)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b &^ 0xffff)
}

// roundFloat16 rounds to IEEE half precision (1 sign, 5 exponent, 10
// mantissa bits): subnormals below 2^-14, infinity above 65504.
func roundFloat16(x float32) float32 {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		return x
	}
	a := math.Abs(f)
	if a >= 65520 { // rounds past the largest half, 65504
		return float32(math.Copysign(math.Inf(1), f))
	}
	_, exp := math.Frexp(a) // a = m * 2^exp, m in [0.5, 1)
	e := max(exp-1, -14)    // unbiased exponent, subnormals share -14
	ulp := math.Ldexp(1, e-10)
	r := math.RoundToEven(a/ulp) * ulp
	return float32(math.Copysign(r, f))
}
