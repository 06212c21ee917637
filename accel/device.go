package accel

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// Device is one accelerator and its links to the others of a node, with
// the efficiencies its kinds of work reach (fitted: docs/accel.md).
type Device struct {
	Name string
	// PeakFLOPS is the dense bf16 tensor peak; fp8 doubles it.
	PeakFLOPS    float64
	MemBandwidth sim.Bandwidth
	MemBytes     int64
	// NVLinkBandwidth is per direction; NVLinkHopLatency per ring step.
	NVLinkBandwidth  sim.Bandwidth
	NVLinkHopLatency sim.Time
	// LinearEfficiency is the share of the peak the linear layers reach
	// with many tokens; with T tokens they reach LinearEfficiency x T / (T
	// + LinearHalfTokens).
	LinearEfficiency, LinearHalfTokens float64
	// AttentionEfficiency is causal attention among a prompt's new tokens;
	// CachedAttentionEfficiency new tokens against a cached context.
	AttentionEfficiency, CachedAttentionEfficiency float64
	// MemoryEfficiency is the share of the bandwidth weights and KV stream
	// at.
	MemoryEfficiency float64
	// AllReduceEfficiency is the fraction of NVLink bandwidth an all-reduce
	// reaches.
	AllReduceEfficiency float64
	// AllReduceLargeBytes and AllReduceLargeEfficiency: the bytes of a
	// message past this many go at this fraction instead (NCCL picks its
	// algorithm and protocol by the message's size); only the bytes past
	// it, so an all-reduce's time has no step there. 0: one efficiency
	// for every size.
	AllReduceLargeBytes      float64
	AllReduceLargeEfficiency float64
	// SMs is the number of streaming multiprocessors; KernelLaunch the
	// cost of one kernel launch.
	SMs          int
	KernelLaunch sim.Time
}

// MinEfficiency is the least share of peak an efficiency may be: 0.1 %, a
// tenth of the fit's lowest bound (accel/fit.go). Far below it a step's
// terms pass MaxTime; until 2026-11-26 a device file took any positive
// value, and at 1e-12 the terms' sum wrapped round and the run got faster.
const MinEfficiency = 0.001

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
	}{{"linear_efficiency", d.LinearEfficiency}, {"attention_efficiency", d.AttentionEfficiency},
		{"cached_attention_efficiency", d.CachedAttentionEfficiency}, {"memory_efficiency", d.MemoryEfficiency},
		{"allreduce_efficiency", d.AllReduceEfficiency}, {"allreduce_large_efficiency", d.AllReduceLargeEfficiency}} {
		if e.name == "allreduce_large_efficiency" && d.AllReduceLargeBytes == 0 {
			continue // one efficiency for every size
		}
		if !(e.v >= MinEfficiency && e.v <= 1) {
			return fmt.Errorf("device %q: %s = %v: must be in [%v, 1]", d.Name, e.name, e.v, MinEfficiency)
		}
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"linear_half_tokens", d.LinearHalfTokens}, {"allreduce_large_mb", d.AllReduceLargeBytes / 1e6}} {
		if !(x.v >= 0) || math.IsInf(x.v, 0) {
			return fmt.Errorf("device %q: %s = %v: must not be negative", d.Name, x.name, x.v)
		}
	}
	if d.NVLinkHopLatency < 0 {
		return fmt.Errorf("device %q: NVLink latency must not be negative", d.Name)
	}
	return nil
}

// fit is a device class's fitted coefficients (FitDevices reproduces
// them; docs/accel.md gives each one's provenance).
type fit struct {
	Linear, LinearHalfTokens, Attention, CachedAttention, Memory float64
	AllReduce, AllReduceLargeBytes, AllReduceLarge               float64
	HopLatency                                                   sim.Time
}

// kernelLaunch is a kernel launch with its stream synchronisation (a few
// microseconds on current GPUs).
const kernelLaunch = 4 * sim.Microsecond

func device(name string, tflops, tbps float64, gb int64, nvlinkGBps float64, sms int, f fit) Device {
	return Device{Name: name, PeakFLOPS: tflops * 1e12, MemBandwidth: sim.Bandwidth(tbps * 1e12), MemBytes: gb * 1_000_000_000,
		NVLinkBandwidth: sim.Bandwidth(nvlinkGBps * 1e9), NVLinkHopLatency: f.HopLatency, SMs: sms, KernelLaunch: kernelLaunch}.with(f)
}

// with sets the fitted coefficients.
func (d Device) with(f fit) Device {
	d.LinearEfficiency, d.LinearHalfTokens, d.AttentionEfficiency = f.Linear, f.LinearHalfTokens, f.Attention
	d.CachedAttentionEfficiency, d.MemoryEfficiency = f.CachedAttention, f.Memory
	d.AllReduceEfficiency, d.NVLinkHopLatency = f.AllReduce, f.HopLatency
	d.AllReduceLargeBytes, d.AllReduceLargeEfficiency = f.AllReduceLargeBytes, f.AllReduceLarge
	return d
}

// fitted is the device's fitted coefficients.
func (d Device) fitted() fit {
	return fit{Linear: d.LinearEfficiency, LinearHalfTokens: d.LinearHalfTokens, Attention: d.AttentionEfficiency,
		CachedAttention: d.CachedAttentionEfficiency, Memory: d.MemoryEfficiency, AllReduce: d.AllReduceEfficiency,
		AllReduceLargeBytes: d.AllReduceLargeBytes, AllReduceLarge: d.AllReduceLargeEfficiency, HopLatency: d.NVLinkHopLatency}
}

// Device presets from the vendors' datasheets: dense bf16 peak, HBM
// bandwidth and size, NVLink bandwidth per direction.
var devicePresets = map[string]Device{
	"h100-sxm":  device("h100-sxm", 989.4, 3.35, 80, 450, 132, h100Fit),
	"h200":      device("h200", 989.4, 4.8, 141, 450, 132, h100Fit),
	"a100-80gb": device("a100-80gb", 312, 2.039, 80, 300, 108, a100Fit),
	"h800":      device("h800", 989.4, 3.35, 80, 200, 132, h100Fit),
	"a800":      device("a800", 312, 2.039, 80, 200, 108, a100Fit),
	// The A40 (GA102, PCIe Gen4 x16): its NVLink bridge joins two cards at
	// 112.5 GB/s both ways together; an Ampere part, so the A100 class's
	// efficiencies (docs/accel.md).
	"a40": device("a40", 149.7, 0.696, 48, 56.25, 84, a100Fit),
}

// DevicePreset returns a device by name; an unknown name lists the valid
// ones.
func DevicePreset(name string) (Device, error) {
	if d, ok := devicePresets[name]; ok {
		return d, nil
	}
	return Device{}, fmt.Errorf("unknown accelerator %q: valid accelerators are %s", name, strings.Join(DeviceNames(), ", "))
}

// DeviceNames lists the device presets' names, sorted.
func DeviceNames() []string {
	return slices.Sorted(maps.Keys(devicePresets))
}
