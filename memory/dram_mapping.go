package memory

import (
	"fmt"
	"strings"
)

// field is one part of a DRAM address.
type field int

const (
	fChannel field = iota
	fRank
	fBankGroup
	fBank
	fRow
	fColumn
	numFields
)

var fieldNames = [numFields]string{"channel", "rank", "bankgroup", "bank", "row", "column"}

// location is a decoded burst address. column counts bursts within a row.
type location struct {
	channel, rank, bankGroup, bank, row, column int
}

// mapping decodes byte addresses into locations. Fields are mixed-radix
// digits (a field of n values is "address mod n", then "address / n"), so
// counts need not be powers of two (the H100 has 160 pseudo-channels).
type mapping struct {
	// order lists the fields from least to most significant.
	order []field
	radix [numFields]int64
	// weight is the number of bursts one step of each field spans.
	weight     [numFields]int64
	burstBytes int64
	// bankHasGroup: the bank field also carries the bank group (high digit).
	bankHasGroup  bool
	banksPerGroup int
}

// parseMapping reads a mapping such as "row:bank:rank:column:channel".
func parseMapping(spec string, c DRAMConfig) (mapping, error) {
	m := mapping{burstBytes: c.BurstBytes(), banksPerGroup: c.BanksPerGroup}
	seen := [numFields]bool{}
	parts := strings.Split(spec, ":")
	for i := len(parts) - 1; i >= 0; i-- {
		f := fieldByName(strings.TrimSpace(parts[i]))
		if f < 0 || seen[f] {
			return m, fmt.Errorf("dram %q: mapping %q: field %q is unknown or repeated (fields: %s)",
				c.Name, spec, parts[i], strings.Join(fieldNames[:], ", "))
		}
		seen[f] = true
		m.order = append(m.order, f)
	}
	for _, f := range []field{fChannel, fRank, fBank, fRow, fColumn} {
		if !seen[f] {
			return m, fmt.Errorf("dram %q: mapping %q lacks the %s field", c.Name, spec, fieldNames[f])
		}
	}
	m.bankHasGroup = !seen[fBankGroup]
	m.radix = [numFields]int64{fChannel: int64(c.Channels), fRank: int64(c.Ranks), fBankGroup: int64(c.BankGroups),
		fBank: int64(c.BanksPerGroup), fRow: int64(c.Rows), fColumn: c.RowBytes / m.burstBytes}
	if m.bankHasGroup {
		m.radix[fBank] *= int64(c.BankGroups)
	}
	w := int64(1)
	for _, f := range m.order {
		m.weight[f] = w
		w *= m.radix[f]
	}
	return m, nil
}

func fieldByName(name string) field {
	for i, n := range fieldNames {
		if n == name {
			return field(i)
		}
	}
	return -1
}

// decode maps a byte address (wrapping at the device's capacity) to a
// location.
func (m *mapping) decode(addr int64) location {
	a := addr / m.burstBytes
	var v [numFields]int
	for _, f := range m.order {
		v[f] = int(a % m.radix[f])
		a /= m.radix[f]
	}
	loc := location{channel: v[fChannel], rank: v[fRank], bankGroup: v[fBankGroup], bank: v[fBank], row: v[fRow], column: v[fColumn]}
	if m.bankHasGroup {
		loc.bankGroup, loc.bank = loc.bank/m.banksPerGroup, loc.bank%m.banksPerGroup
	}
	return loc
}

// streamBlock describes how a sequential transfer walks the device, for the
// bulk path. A block is the aligned address range in which only the
// channel, column and (when it lies below column) bank-group digits vary:
// within it each channel streams through open rows, rotating over
// rotateGroups bank groups. ok is false when other digits lie lower (a
// mapping that scatters consecutive bursts over banks), where the bulk path
// does not apply.
type streamBlock struct {
	ok           bool
	bytes        int64
	rotateGroups int
}

func (m *mapping) streamBlock() streamBlock {
	b := streamBlock{bytes: m.burstBytes, rotateGroups: 1}
	sawColumn := false
	for _, f := range m.order {
		switch {
		case f == fChannel:
		case f == fColumn:
			sawColumn = true
		case f == fBankGroup && !sawColumn:
			b.rotateGroups = int(m.radix[f])
		case m.radix[f] == 1:
		default: // the first digit that changes the bank or row ends the block
			b.ok = sawColumn
			return b
		}
		b.bytes *= m.radix[f]
	}
	b.ok = sawColumn
	return b
}
