package sim

import "math"

// Calibration is one check of a model against a published or measured
// figure: the model's value must lie within Tolerance (relative) of Target.
// Packages expose their checks as functions that both their tests and
// `simrun calibrate` run, so that every calibration claim is a test.
type Calibration struct {
	Name   string  `json:"name"`
	Target float64 `json:"target"`
	Model  float64 `json:"model"`
	Unit   string  `json:"unit"`
	// Tolerance is relative: 0.1 accepts |model - target| <= 10 % of target;
	// 0 demands equality. With a target of 0 (an error that should vanish)
	// it bounds |model| itself: 0.15 accepts an error up to 0.15.
	Tolerance float64 `json:"tolerance"`
	Source    string  `json:"source"`
	OK        bool    `json:"ok"`
}

// NewCalibration fills in OK.
func NewCalibration(name string, target, model float64, unit string, tolerance float64, source string) Calibration {
	bound := tolerance * math.Abs(target)
	if target == 0 {
		bound = tolerance
	}
	ok := math.Abs(model-target) <= bound
	return Calibration{Name: name, Target: target, Model: model, Unit: unit, Tolerance: tolerance, Source: source, OK: ok}
}

// RelativeError returns (model - target) / target.
func (c Calibration) RelativeError() float64 { return (c.Model - c.Target) / c.Target }
