package memory

import (
	"fmt"
	"sort"

	"github.com/kvcosim/kvcosim/sim"
)

// loggedCmd is one command from a channel's command log.
type loggedCmd struct {
	cmd cmdKind
	loc location
	at  sim.Cycles
}

// timingChecker re-checks a command log against the JEDEC rules with plain
// per-bank, per-bank-group and per-rank histories, independently of the
// controller's incremental "earliest cycle" bookkeeping.
type timingChecker struct {
	t    DRAMTiming
	errs []string
}

type bankHistory struct {
	open                    int
	act, pre, rd, wrEnd     sim.Cycles
	everAct, everRd, everWr bool
	everPre                 bool
	actAfterRef             bool
}

type groupHistory struct {
	act, rd, wr, wrEnd      sim.Cycles
	everAct, everRd, everWr bool
}

type rankHistory struct {
	acts                    []sim.Cycles
	rd, wr, wrEnd, ref      sim.Cycles
	everRd, everWr, everRef bool
}

func (c *timingChecker) failf(format string, args ...any) {
	if len(c.errs) < 20 {
		c.errs = append(c.errs, fmt.Sprintf(format, args...))
	}
}

// need records a violation if at < earliest for a rule that applies.
func (c *timingChecker) need(applies bool, at, earliest sim.Cycles, rule string, cmd loggedCmd) {
	if applies && at < earliest {
		c.failf("%v at cycle %d to %+v: %s needs cycle >= %d", cmdName(cmd.cmd), at, cmd.loc, rule, earliest)
	}
}

func cmdName(k cmdKind) string { return [...]string{"ACT", "PRE", "RD", "WR", "REF"}[k] }

// check verifies one channel's log; it returns the number of column commands.
func (c *timingChecker) check(log []loggedCmd) int {
	sort.SliceStable(log, func(i, j int) bool { return log[i].at < log[j].at })
	t := c.t
	bl := t.burstCycles()
	banks := map[[3]int]*bankHistory{}
	groups := map[[2]int]*groupHistory{}
	ranks := map[int]*rankHistory{}
	var busEnd sim.Cycles = -1 << 40
	busRank, busWrite := -1, false
	lastCmdAt := sim.Cycles(-1)
	columns := 0
	for _, e := range log {
		l := e.loc
		rk := ranks[l.rank]
		if rk == nil {
			rk = &rankHistory{}
			ranks[l.rank] = rk
		}
		if e.cmd == cmdREF {
			for key, b := range banks {
				if key[0] != l.rank || b.open < 0 {
					continue
				}
				c.need(true, e.at, b.act+t.NRAS, "precharge-all after nRAS", e)
				c.need(b.everRd, e.at, b.rd+t.NRTP, "precharge-all after nRTP", e)
				c.need(b.everWr, e.at, b.wrEnd+t.NWR, "precharge-all after nWR", e)
				b.open = -1
			}
			rk.ref, rk.everRef = e.at, true
			continue
		}
		if e.at == lastCmdAt {
			c.failf("two commands on the command bus at cycle %d", e.at)
		}
		lastCmdAt = e.at
		bk := banks[[3]int{l.rank, l.bankGroup, l.bank}]
		if bk == nil {
			bk = &bankHistory{open: -1}
			banks[[3]int{l.rank, l.bankGroup, l.bank}] = bk
		}
		g := groups[[2]int{l.rank, l.bankGroup}]
		if g == nil {
			g = &groupHistory{}
			groups[[2]int{l.rank, l.bankGroup}] = g
		}
		switch e.cmd {
		case cmdACT:
			if bk.open >= 0 {
				c.failf("ACT at %d to open bank %+v", e.at, l)
			}
			c.need(bk.everAct, e.at, bk.act+t.NRC, "nRC", e)
			c.need(bk.everPre, e.at, bk.pre+t.NRP, "nRP", e)
			c.need(len(rk.acts) > 0, e.at, last(rk.acts)+t.NRRDS, "nRRD_S", e)
			c.need(g.everAct, e.at, g.act+t.NRRDL, "nRRD_L", e)
			c.need(len(rk.acts) >= 4, e.at, nthLast(rk.acts, 4)+t.NFAW, "nFAW", e)
			c.need(rk.everRef, e.at, rk.ref+t.NRP+t.NRFC, "nRFC", e)
			bk.open, bk.act, bk.everAct = l.row, e.at, true
			g.act, g.everAct = e.at, true
			rk.acts = append(rk.acts, e.at)
		case cmdPRE:
			if bk.open < 0 {
				c.failf("PRE at %d to closed bank %+v", e.at, l)
			}
			c.need(true, e.at, bk.act+t.NRAS, "nRAS", e)
			c.need(bk.everRd, e.at, bk.rd+t.NRTP, "nRTP", e)
			c.need(bk.everWr, e.at, bk.wrEnd+t.NWR, "nWR", e)
			bk.open, bk.pre, bk.everPre = -1, e.at, true
		case cmdRD, cmdWR:
			columns++
			if bk.open != l.row {
				c.failf("%s at %d to %+v whose open row is %d", cmdName(e.cmd), e.at, l, bk.open)
			}
			c.need(true, e.at, bk.act+t.NRCD, "nRCD", e)
			write := e.cmd == cmdWR
			lat := t.NCL
			if write {
				lat = t.NCWL
				c.need(rk.everWr, e.at, rk.wr+t.NCCDS, "nCCD_S", e)
				c.need(g.everWr, e.at, g.wr+t.NCCDL, "nCCD_L", e)
			} else {
				c.need(rk.everRd, e.at, rk.rd+t.NCCDS, "nCCD_S", e)
				c.need(g.everRd, e.at, g.rd+t.NCCDL, "nCCD_L", e)
				c.need(rk.everWr, e.at, rk.wrEnd+t.NWTRS, "nWTR_S", e)
				c.need(g.everWr, e.at, g.wrEnd+t.NWTRL, "nWTR_L", e)
			}
			turn := sim.Cycles(0)
			if busRank != l.rank || busWrite != write {
				turn = t.NRTRS
			}
			c.need(true, e.at+lat, busEnd+turn, "data bus free", e)
			busEnd, busRank, busWrite = e.at+lat+bl, l.rank, write
			if write {
				end := e.at + t.NCWL + bl
				bk.wrEnd, bk.everWr = end, true
				g.wr, g.wrEnd, g.everWr = e.at, end, true
				rk.wr, rk.wrEnd, rk.everWr = e.at, end, true
			} else {
				bk.rd, bk.everRd = e.at, true
				g.rd, g.everRd = e.at, true
				rk.rd, rk.everRd = e.at, true
			}
		}
	}
	return columns
}

func last(v []sim.Cycles) sim.Cycles { return nthLast(v, 1) }

// nthLast returns the n-th last entry, or never when there are fewer.
func nthLast(v []sim.Cycles, n int) sim.Cycles {
	if len(v) < n {
		return never
	}
	return v[len(v)-n]
}
