package accel

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// Efficiency is what fraction of the peak a phase reaches, and its fixed
// cost per iteration.
type Efficiency struct {
	// Compute and Memory are fractions of peak FLOPS and of memory
	// bandwidth, in (0, 1].
	Compute, Memory float64
	// Overhead is a fixed time per iteration (launches, scheduling).
	Overhead sim.Time
}

// Device is one accelerator and its links to the others of a node.
type Device struct {
	Name string
	// PeakFLOPS is the dense bf16 tensor peak; fp8 doubles it.
	PeakFLOPS    float64
	MemBandwidth sim.Bandwidth
	MemBytes     int64
	// NVLinkBandwidth is per direction; NVLinkHopLatency per ring step.
	NVLinkBandwidth  sim.Bandwidth
	NVLinkHopLatency sim.Time
	// Prefill applies to iterations with prompt tokens, Decode to the rest.
	Prefill, Decode Efficiency
	// AllReduceEfficiency is the fraction of NVLink bandwidth an all-reduce
	// reaches.
	AllReduceEfficiency float64
	// SMs is the number of streaming multiprocessors; KernelLaunch the
	// cost of one kernel launch.
	SMs          int
	KernelLaunch sim.Time
}

// Validate checks the device; errors name the parameter and range.
func (d Device) Validate() error {
	if !(d.PeakFLOPS > 0) || math.IsInf(d.PeakFLOPS, 0) {
		return fmt.Errorf("device %q: peak_tflops must be positive", d.Name)
	}
	if d.MemBandwidth <= 0 || d.MemBytes <= 0 || d.NVLinkBandwidth <= 0 {
		return fmt.Errorf("device %q: memory bandwidth, memory size and NVLink bandwidth must be positive", d.Name)
	}
	for _, e := range []struct {
		name string
		v    float64
	}{{"prefill.compute_efficiency", d.Prefill.Compute}, {"prefill.memory_efficiency", d.Prefill.Memory},
		{"decode.compute_efficiency", d.Decode.Compute}, {"decode.memory_efficiency", d.Decode.Memory},
		{"allreduce_efficiency", d.AllReduceEfficiency}} {
		if !(e.v > 0 && e.v <= 1) {
			return fmt.Errorf("device %q: %s = %v: must be in (0, 1]", d.Name, e.name, e.v)
		}
	}
	if d.Prefill.Overhead < 0 || d.Decode.Overhead < 0 || d.NVLinkHopLatency < 0 {
		return fmt.Errorf("device %q: overheads and NVLink latency must not be negative", d.Name)
	}
	return nil
}

// The efficiencies below are fitted on Splitwise's measured Llama2-70B runs
// (`simrun calibrate` refits and reports the held-out error); H200, H800
// and A800 take those of their compute class.
var (
	a100Fit = fit{Prefill: Efficiency{0.67, 0.32, 2500 * sim.Microsecond}, Decode: Efficiency{0.36, 1.0, 23200 * sim.Microsecond},
		AllReduce: 0.19, HopLatency: 5800 * sim.Nanosecond}
	h100Fit = fit{Prefill: Efficiency{0.56, 0.36, 4100 * sim.Microsecond}, Decode: Efficiency{0.50, 0.88, 12000 * sim.Microsecond},
		AllReduce: 0.24, HopLatency: 5700 * sim.Nanosecond}
)

// fit is a device class's fitted efficiencies.
type fit struct {
	Prefill, Decode Efficiency
	AllReduce       float64
	HopLatency      sim.Time
}

// kernelLaunch is a kernel launch with its stream synchronisation (a few
// microseconds on current GPUs).
const kernelLaunch = 4 * sim.Microsecond

func device(name string, tflops, tbps float64, gb int64, nvlinkGBps float64, sms int, f fit) Device {
	return Device{Name: name, PeakFLOPS: tflops * 1e12, MemBandwidth: sim.Bandwidth(tbps * 1e12), MemBytes: gb * 1_000_000_000,
		NVLinkBandwidth: sim.Bandwidth(nvlinkGBps * 1e9), NVLinkHopLatency: f.HopLatency,
		Prefill: f.Prefill, Decode: f.Decode, AllReduceEfficiency: f.AllReduce, SMs: sms, KernelLaunch: kernelLaunch}
}

// Device presets from the vendors' datasheets: dense bf16 peak, HBM
// bandwidth and size, NVLink bandwidth per direction.
var devicePresets = map[string]Device{
	"h100-sxm":  device("h100-sxm", 989.4, 3.35, 80, 450, 132, h100Fit),
	"h200":      device("h200", 989.4, 4.8, 141, 450, 132, h100Fit),
	"a100-80gb": device("a100-80gb", 312, 2.039, 80, 300, 108, a100Fit),
	"h800":      device("h800", 989.4, 3.35, 80, 200, 132, h100Fit),
	"a800":      device("a800", 312, 2.039, 80, 200, 108, a100Fit),
}

// DevicePreset returns a device by name; an unknown name lists the valid
// ones.
func DevicePreset(name string) (Device, error) {
	if d, ok := devicePresets[name]; ok {
		return d, nil
	}
	names := make([]string, 0, len(devicePresets))
	for n := range devicePresets {
		names = append(names, n)
	}
	sort.Strings(names)
	return Device{}, fmt.Errorf("unknown accelerator %q: valid accelerators are %s", name, strings.Join(names, ", "))
}
