package accel

import (
	"fmt"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// DeviceFile is a device kept in a YAML file: a preset and the figures
// that replace the preset's own. `simrun calibrate --measured --fit`
// writes one for a measured GPU; the scenario key
// accelerator.device_file reads it. Every key carries its unit; a key
// left out keeps the preset's value.
type DeviceFile struct {
	Base                      string   `yaml:"base"`
	Name                      string   `yaml:"name"`
	PeakTFLOPS                *float64 `yaml:"peak_tflops"`
	MemBandwidthTBps          *float64 `yaml:"mem_bandwidth_tbps"`
	MemGB                     *float64 `yaml:"mem_gb"`
	NVLinkGBps                *float64 `yaml:"nvlink_gbps"`
	SMs                       *int     `yaml:"sms"`
	KernelLaunchUs            *float64 `yaml:"kernel_launch_us"`
	LinearEfficiency          *float64 `yaml:"linear_efficiency"`
	LinearHalfTokens          *float64 `yaml:"linear_half_tokens"`
	AttentionEfficiency       *float64 `yaml:"attention_efficiency"`
	CachedAttentionEfficiency *float64 `yaml:"cached_attention_efficiency"`
	MemoryEfficiency          *float64 `yaml:"memory_efficiency"`
	AllReduceEfficiency       *float64 `yaml:"allreduce_efficiency"`
	AllReduceLargeMB          *float64 `yaml:"allreduce_large_mb"`
	AllReduceLargeEfficiency  *float64 `yaml:"allreduce_large_efficiency"`
	NVLinkHopLatencyUs        *float64 `yaml:"nvlink_hop_latency_us"`
}

// FieldError is a device file's bad value: its key and what is wrong.
type FieldError struct{ Key, Msg string }

func (e *FieldError) Error() string { return "key " + e.Key + ": " + e.Msg }

// deviceField is one key of a device file: its value, range and where it
// goes in the device.
type deviceField struct {
	key    string
	v      *float64
	lo, hi float64
	set    func(d *Device, v float64)
}

func (f DeviceFile) fields() []deviceField {
	eff := func(key string, v *float64, set func(d *Device, v float64)) deviceField {
		return deviceField{key, v, MinEfficiency, 1, set}
	}
	return []deviceField{
		{"peak_tflops", f.PeakTFLOPS, 1, 1e5, func(d *Device, v float64) { d.PeakFLOPS = v * 1e12 }},
		{"mem_bandwidth_tbps", f.MemBandwidthTBps, 0.01, 1e3, func(d *Device, v float64) { d.MemBandwidth = sim.Bandwidth(v * 1e12) }},
		{"mem_gb", f.MemGB, 1, 1e5, func(d *Device, v float64) { d.MemBytes = int64(v * 1e9) }},
		{"nvlink_gbps", f.NVLinkGBps, 1, 1e5, func(d *Device, v float64) { d.NVLinkBandwidth = sim.Bandwidth(v * 1e9) }},
		{"kernel_launch_us", f.KernelLaunchUs, 0, 1e3, func(d *Device, v float64) { d.KernelLaunch = sim.TimeOf(v * 1e6) }},
		eff("linear_efficiency", f.LinearEfficiency, func(d *Device, v float64) { d.LinearEfficiency = v }),
		{"linear_half_tokens", f.LinearHalfTokens, 0, 1e6, func(d *Device, v float64) { d.LinearHalfTokens = v }},
		eff("attention_efficiency", f.AttentionEfficiency, func(d *Device, v float64) { d.AttentionEfficiency = v }),
		eff("cached_attention_efficiency", f.CachedAttentionEfficiency, func(d *Device, v float64) { d.CachedAttentionEfficiency = v }),
		eff("memory_efficiency", f.MemoryEfficiency, func(d *Device, v float64) { d.MemoryEfficiency = v }),
		eff("allreduce_efficiency", f.AllReduceEfficiency, func(d *Device, v float64) { d.AllReduceEfficiency = v }),
		{"allreduce_large_mb", f.AllReduceLargeMB, 0, 1e6, func(d *Device, v float64) { d.AllReduceLargeBytes = v * 1e6 }},
		eff("allreduce_large_efficiency", f.AllReduceLargeEfficiency, func(d *Device, v float64) { d.AllReduceLargeEfficiency = v }),
		{"nvlink_hop_latency_us", f.NVLinkHopLatencyUs, 0, 1e3, func(d *Device, v float64) { d.NVLinkHopLatency = sim.TimeOf(v * 1e6) }},
	}
}

// Device is the file's device: its base preset with the file's values,
// each checked against its range (a *FieldError names the key).
func (f DeviceFile) Device() (Device, error) {
	if f.Base == "" {
		return Device{}, &FieldError{"base", "missing: a device file names the preset it changes (" + strings.Join(DeviceNames(), ", ") + ")"}
	}
	d, err := DevicePreset(f.Base)
	if err != nil {
		return Device{}, &FieldError{"base", err.Error()}
	}
	if f.Name != "" {
		d.Name = f.Name
	}
	if f.SMs != nil {
		if *f.SMs < 1 || *f.SMs > 1<<16 {
			return Device{}, &FieldError{"sms", fmt.Sprintf("%d is out of range [1, %d]", *f.SMs, 1<<16)}
		}
		d.SMs = *f.SMs
	}
	for _, x := range f.fields() {
		if x.v == nil {
			continue
		}
		if !(*x.v >= x.lo && *x.v <= x.hi) {
			return Device{}, &FieldError{x.key, fmt.Sprintf("%v is out of range [%v, %v]", *x.v, x.lo, x.hi)}
		}
		x.set(&d, *x.v)
	}
	return d, d.Validate()
}

// DeviceFileOf is d written as a file over the preset base: every key.
func DeviceFileOf(base string, d Device) DeviceFile {
	p := func(v float64) *float64 { return &v }
	sms := d.SMs
	return DeviceFile{Base: base, Name: d.Name, PeakTFLOPS: p(d.PeakFLOPS / 1e12), MemBandwidthTBps: p(float64(d.MemBandwidth) / 1e12),
		MemGB: p(float64(d.MemBytes) / 1e9), NVLinkGBps: p(float64(d.NVLinkBandwidth) / 1e9), SMs: &sms,
		KernelLaunchUs: p(float64(d.KernelLaunch) / 1e6), LinearEfficiency: p(d.LinearEfficiency), LinearHalfTokens: p(d.LinearHalfTokens),
		AttentionEfficiency: p(d.AttentionEfficiency), CachedAttentionEfficiency: p(d.CachedAttentionEfficiency),
		MemoryEfficiency: p(d.MemoryEfficiency), AllReduceEfficiency: p(d.AllReduceEfficiency),
		AllReduceLargeMB: p(d.AllReduceLargeBytes / 1e6), AllReduceLargeEfficiency: p(d.AllReduceLargeEfficiency),
		NVLinkHopLatencyUs: p(float64(d.NVLinkHopLatency) / 1e6)}
}

// YAML writes the file, a key a line, headed by comment lines.
func (f DeviceFile) YAML(comments ...string) []byte {
	var b strings.Builder
	for _, c := range comments {
		fmt.Fprintf(&b, "# %s\n", c)
	}
	fmt.Fprintf(&b, "base: %s\n", f.Base)
	if f.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", f.Name)
	}
	if f.SMs != nil {
		fmt.Fprintf(&b, "sms: %d\n", *f.SMs)
	}
	for _, x := range f.fields() {
		if x.v != nil {
			fmt.Fprintf(&b, "%s: %s\n", x.key, g4(*x.v))
		}
	}
	return []byte(b.String())
}
