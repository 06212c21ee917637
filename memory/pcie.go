package memory

import (
	"fmt"
	"strings"

	"github.com/kvcosim/kvcosim/sim"
)

// PCIeDirection holds the per-direction parameters of a PCIe link and its
// DMA engine.
type PCIeDirection struct {
	// MaxPayloadBytes is the data carried per TLP: the max payload size for
	// posted writes, the read completion size for data read by DMA.
	MaxPayloadBytes int64
	// HeaderBytes is the per-TLP overhead on the wire (header, sequence
	// number, LCRC, framing) plus the share of DLLPs.
	HeaderBytes int64
	// DescriptorBytes is the data moved per DMA descriptor.
	DescriptorBytes int64
	// DescriptorOverhead is the DMA engine's time per descriptor that does
	// not overlap with data movement.
	DescriptorOverhead sim.Time
}

// PCIeConfig describes a PCIe link with a DMA engine at one end.
type PCIeConfig struct {
	Name string
	// Generation is 3, 4 or 5 (8, 16 or 32 GT/s per lane, 128b/130b).
	Generation int
	// Lanes is 1, 2, 4, 8 or 16.
	Lanes int
	// Links > 1 are that many such links side by side, every transfer
	// striped evenly across them: the links of the GPUs of a
	// tensor-parallel group, each holding its share of every layer's KV
	// heads.
	Links int
	// Latency is the one-way latency (a round trip is twice this).
	Latency sim.Time
	// HostToCard and CardToHost are the two independent directions.
	HostToCard, CardToHost PCIeDirection
}

var pcieGTps = map[int]int64{3: 8, 4: 16, 5: 32}

// RawBandwidth is the per-direction rate after 128b/130b encoding.
func (c PCIeConfig) RawBandwidth() sim.Bandwidth {
	return sim.Bandwidth(pcieGTps[c.Generation] * 1_000_000_000 * int64(c.Lanes) * 128 / 130 / 8)
}

// Validate checks the configuration; errors name the parameter.
func (c PCIeConfig) Validate() error {
	if _, ok := pcieGTps[c.Generation]; !ok {
		return fmt.Errorf("pcie %q: generation = %d: must be 3, 4 or 5", c.Name, c.Generation)
	}
	switch c.Lanes {
	case 1, 2, 4, 8, 16:
	default:
		return fmt.Errorf("pcie %q: lanes = %d: must be 1, 2, 4, 8 or 16", c.Name, c.Lanes)
	}
	if c.Links < 1 || c.Links > MaxPCIeLinks {
		return fmt.Errorf("pcie %q: links = %d: must be 1 to %d", c.Name, c.Links, MaxPCIeLinks)
	}
	if c.Latency < 0 {
		return fmt.Errorf("pcie %q: latency = %v: must not be negative", c.Name, c.Latency)
	}
	for _, d := range []struct {
		name string
		p    PCIeDirection
	}{{"host_to_card", c.HostToCard}, {"card_to_host", c.CardToHost}} {
		p := d.p
		if p.MaxPayloadBytes < 64 || p.MaxPayloadBytes > 4096 || p.MaxPayloadBytes&(p.MaxPayloadBytes-1) != 0 {
			return fmt.Errorf("pcie %q: %s.max_payload_bytes = %d: must be a power of two in [64, 4096]", c.Name, d.name, p.MaxPayloadBytes)
		}
		if p.HeaderBytes < 0 || p.HeaderBytes > 128 {
			return fmt.Errorf("pcie %q: %s.header_bytes = %d: must be in [0, 128]", c.Name, d.name, p.HeaderBytes)
		}
		if p.DescriptorBytes < 1 || p.DescriptorOverhead < 0 {
			return fmt.Errorf("pcie %q: %s: descriptor_bytes = %d must be positive and descriptor_overhead = %v not negative",
				c.Name, d.name, p.DescriptorBytes, p.DescriptorOverhead)
		}
	}
	return nil
}

// MaxPCIeLinks bounds PCIeConfig.Links: the GPUs of one node.
const MaxPCIeLinks = 16

// linkConfig turns one direction into a sim link; striped links add up
// their bandwidth and their DMA engines work on their descriptors at once.
func (c PCIeConfig) linkConfig(d PCIeDirection) sim.LinkConfig {
	links := int64(c.Links)
	return sim.LinkConfig{Bandwidth: c.RawBandwidth() * sim.Bandwidth(links), Latency: c.Latency, PacketPayloadBytes: d.MaxPayloadBytes,
		PacketHeaderBytes: d.HeaderBytes, ChunkBytes: d.DescriptorBytes, ChunkOverhead: d.DescriptorOverhead / sim.Time(links)}
}

// PCIe is a link's two independent directions.
type PCIe struct {
	cfg                    PCIeConfig
	HostToCard, CardToHost *sim.Link
}

// NewPCIe validates cfg and builds both directions.
func NewPCIe(eng *sim.Engine, cfg PCIeConfig) (*PCIe, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h2c, err := sim.NewLink(eng, cfg.Name+".h2c", cfg.linkConfig(cfg.HostToCard))
	if err != nil {
		return nil, err
	}
	c2h, err := sim.NewLink(eng, cfg.Name+".c2h", cfg.linkConfig(cfg.CardToHost))
	if err != nil {
		return nil, err
	}
	return &PCIe{cfg: cfg, HostToCard: h2c, CardToHost: c2h}, nil
}

// Config returns the link's configuration.
func (p *PCIe) Config() PCIeConfig { return p.cfg }

// pcieTLPHeaderBytes is a 64-bit-address TLP's overhead: 16 B header, 2 B
// sequence number, 4 B LCRC and 2 B framing (PCIe base specification).
const pcieTLPHeaderBytes = 24

// plainDirection is a direction with 256 B TLPs and an ideal DMA engine.
func plainDirection() PCIeDirection {
	return PCIeDirection{MaxPayloadBytes: 256, HeaderBytes: pcieTLPHeaderBytes, DescriptorBytes: 4096}
}

// PCIeLink returns a generic link of a generation and width: 256 B max
// payload, 24 B per TLP, 450 ns one way, an ideal DMA engine.
func PCIeLink(generation, lanes int) PCIeConfig {
	return PCIeConfig{Name: fmt.Sprintf("gen%dx%d", generation, lanes), Generation: generation, Lanes: lanes, Links: 1,
		Latency: 450 * sim.Nanosecond, HostToCard: plainDirection(), CardToHost: plainDirection()}
}

// AlveoU55CXDMA is the Gen3 x16 XDMA platform of an Alveo U55C, calibrated
// to xbtest's measured 9.0 GB/s host-to-card and 12.2 GB/s card-to-host:
// card-to-host writes use 256 B TLPs, host-to-card data comes back as
// 128 B read completions, and the per-4 KiB-descriptor overheads (146 ns
// and 51 ns) are fitted to the two measurements.
func AlveoU55CXDMA() PCIeConfig {
	c := PCIeLink(3, 16)
	c.Name = "alveo-u55c-xdma"
	c.HostToCard = PCIeDirection{MaxPayloadBytes: 128, HeaderBytes: pcieTLPHeaderBytes, DescriptorBytes: 4096, DescriptorOverhead: 146 * sim.Nanosecond}
	c.CardToHost = PCIeDirection{MaxPayloadBytes: 256, HeaderBytes: pcieTLPHeaderBytes, DescriptorBytes: 4096, DescriptorOverhead: 51 * sim.Nanosecond}
	return c
}

// nvmeHostInterface is an NVMe drive's link: 256 B TLPs and a 20 ns cost
// per 4 KiB PRP page, fitted so that Gen4 x4 and Gen5 x4 drives reach their
// rated sequential reads (6.9 and 13 GB/s) on the link alone.
func nvmeHostInterface(generation int) PCIeConfig {
	c := PCIeLink(generation, 4)
	c.Name = fmt.Sprintf("nvme-gen%dx4", generation)
	d := plainDirection()
	d.DescriptorOverhead = 20 * sim.Nanosecond
	c.HostToCard, c.CardToHost = d, d
	return c
}

var pciePresets = map[string]func() PCIeConfig{
	"gen3x4": func() PCIeConfig { return PCIeLink(3, 4) }, "gen3x16": func() PCIeConfig { return PCIeLink(3, 16) },
	"gen4x4": func() PCIeConfig { return PCIeLink(4, 4) }, "gen4x16": func() PCIeConfig { return PCIeLink(4, 16) },
	"gen5x4": func() PCIeConfig { return PCIeLink(5, 4) }, "gen5x16": func() PCIeConfig { return PCIeLink(5, 16) },
	"alveo-u55c-xdma": AlveoU55CXDMA,
}

// PCIePreset returns the named preset; an unknown name is an error that
// lists the valid ones.
func PCIePreset(name string) (PCIeConfig, error) {
	if f, ok := pciePresets[name]; ok {
		return f(), nil
	}
	return PCIeConfig{}, fmt.Errorf("unknown PCIe preset %q: valid presets are %s", name, strings.Join(presetNames(pciePresets), ", "))
}
