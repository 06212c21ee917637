package accel

import "github.com/kvcosim/kvcosim/sim"

// LayerwiseEnd is how long after a layer-wise load's start the last
// layer of an iteration of compute c, started with the load, ends: the
// load of d brings the layers in address order at an even rate, layer 0's
// K and V landed after num/den of it (1/L for a layer-major object), and
// each layer starts when the layer before is done and its own KV has
// landed. With the share f_i of layer i growing linearly in i, the
// recurrence's closed form is max(f_0 d + c, d + c/L) (docs/hostcpu.md,
// store.load). The host's layer-wise load and the measured profiles'
// layerwise rows price with it.
func LayerwiseEnd(d, c sim.Time, layers, num, den int64) sim.Time {
	first := sim.Time(int64(d) / den * num)
	return max(first+c, d+c/sim.Time(layers))
}
