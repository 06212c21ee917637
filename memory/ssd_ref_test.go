package memory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvcosim/kvcosim/sim"
)

// refDrive is an independent reference for the drive's resolutions: an
// event-by-event queueing model of one drive, written for plainness, not
// speed, and sharing no code with either resolution. Its front end is the
// one docs/memory.md describes (queue slots, controller cores, write
// buffer, host link); its NAND is scheduled the way SSD controllers
// schedule flash transactions (MQSim's TSU_OutofOrder, after Sprinkler,
// HPCA 2014; docs/memory.md cites them):
//
//   - every plane has a queue of reads and a queue of programs, and when it
//     is idle it starts the oldest read before any program (read priority:
//     a read waits for the operation in progress, not for queued programs;
//     programs are not suspended);
//   - a program's page crosses its channel into the plane's cache
//     register while the plane is still busy (cache program, ONFI), one
//     page ahead, and the plane programs it from there; a read's data
//     crosses after its sensing;
//   - every channel is work conserving: when it is idle it serves its
//     planes in turn (round robin), each with its oldest read data waiting,
//     else the program page it loads next, so idle channel time is always
//     backfilled (TSU_OutofOrder serves a channel's chips in turn, reads
//     before writes at each);
//   - a page's buffer space is freed when its program ends.
//
// Planes are independent (multi-plane operation without die interlock), as
// in both resolutions; pages stripe over channels, then dies, then planes,
// and writes go to a striped write pointer.
type refDrive struct {
	eng *sim.Engine
	cfg SSDConfig
	// xfer and prog are a written page's channel and program times, write
	// amplification included
	xfer, prog sim.Time

	queue       []refCmd // commands waiting for a queue slot
	outstanding int
	cores       []sim.Time // when each controller core is next free, used in turn
	core        int

	bufferUsed   int64
	bufferWait   []refCmd
	pendingBytes int64 // bytes arrived that do not fill a page yet
	pointer      int   // the write pointer's stripe position
	toCard       sim.Time
	toHost       sim.Time

	planes   []refPlane
	channels []refChannel
	ends     map[int64]sim.Time // each request's completion
	left     map[int64]int      // each request's commands not yet done
}

// refCmd is one command of request id.
type refCmd struct {
	id          int64
	addr, bytes int64
	write       bool
	pagesLeft   *int // a read's pages not yet across their channel
}

// refPlane is a plane's queues, whether it is busy, and its cache
// register: a program's page loaded (loaded), on the channel or waiting
// for it (loading, load); out is its sensed data waiting for the channel.
type refPlane struct {
	busy, loaded, loading bool
	reads, programs, out  []refPage
	load                  []refPage
	register              refPage
}

// refChannel is whether a channel is busy and whose turn it is (the
// turn-th of its planes, plane ch + turn x Channels).
type refChannel struct {
	busy bool
	turn int
}

// refPage is a page's operation: a read of bytes for cmd, or a program.
type refPage struct {
	plane int
	bytes int64
	cmd   *refCmd
}

// The reference's events.
const (
	refArrive = iota
	refControllerDone
	refWriteArrived
	refSensed
	refProgrammed
	refChannelDone
	refDataReady
	refCommandDone
)

// refEvent is one event of the reference.
type refEvent struct {
	d    *refDrive
	op   int
	cmd  *refCmd
	page refPage
	req  Request
	id   int64
	ch   int
}

func (e *refEvent) Handle(sim.Event) { e.d.handle(e) }

func (d *refDrive) at(t sim.Time, e refEvent) {
	e.d = d
	d.eng.Schedule(t, sim.Event{Handler: &e})
}

// runRefDrive runs the requests, request i at at[i], on the reference and
// returns each request's completion.
func runRefDrive(cfg SSDConfig, at []sim.Time, reqs []Request) map[int64]sim.Time {
	d := &refDrive{eng: sim.NewEngine(0), cfg: cfg, cores: make([]sim.Time, cfg.ControllerCores),
		xfer:   sim.TimeOf(float64(cfg.ChannelBandwidth.TransferTime(cfg.PageBytes)) * cfg.WriteAmplification),
		prog:   sim.TimeOf(float64(cfg.ProgramTime) * cfg.WriteAmplification),
		planes: make([]refPlane, cfg.Planes()), channels: make([]refChannel, cfg.Channels),
		ends: map[int64]sim.Time{}, left: map[int64]int{}}
	for i, r := range reqs {
		d.at(at[i], refEvent{op: refArrive, req: r, id: int64(i)})
	}
	d.eng.Run()
	return d.ends
}

func (d *refDrive) handle(e *refEvent) {
	now := d.eng.Now()
	switch e.op {
	case refArrive: // split into commands, which wait for queue slots in order
		for off := int64(0); off < e.req.Bytes; off += d.cfg.MaxIOBytes {
			d.queue = append(d.queue, refCmd{id: e.id, addr: e.req.Addr + off, bytes: min(d.cfg.MaxIOBytes, e.req.Bytes-off), write: e.req.Write})
			d.left[e.id]++
		}
		d.issue()
	case refControllerDone:
		if e.cmd.write {
			d.bufferWait = append(d.bufferWait, *e.cmd)
			d.admit()
		} else {
			d.read(e.cmd)
		}
	case refWriteArrived: // acknowledged after the overhead; its whole pages go to the planes
		d.at(now+d.cfg.WriteOverhead, refEvent{op: refCommandDone, cmd: e.cmd})
		for d.pendingBytes += e.cmd.bytes; d.pendingBytes >= d.cfg.PageBytes; d.pendingBytes -= d.cfg.PageBytes {
			q := d.pointer
			d.pointer = (d.pointer + 1) % len(d.planes)
			d.planes[q].programs = append(d.planes[q].programs, refPage{plane: q, bytes: d.cfg.PageBytes})
			d.startPlane(q)
		}
	case refSensed: // the plane is free; the data waits for its channel
		d.planes[e.page.plane].busy = false
		ch := e.page.plane % d.cfg.Channels
		d.planes[e.page.plane].out = append(d.planes[e.page.plane].out, e.page)
		d.startChannel(ch)
		d.startPlane(e.page.plane)
	case refProgrammed:
		d.planes[e.page.plane].busy = false
		d.bufferUsed -= e.page.bytes
		d.admit()
		d.startPlane(e.page.plane)
	case refChannelDone:
		d.channels[e.ch].busy = false
		if e.page.cmd != nil { // a read's page is out
			if *e.page.cmd.pagesLeft--; *e.page.cmd.pagesLeft == 0 {
				d.at(now+d.cfg.ReadOverhead, refEvent{op: refDataReady, cmd: e.page.cmd})
			}
		} else { // a program's page is in its plane's register
			p := &d.planes[e.page.plane]
			p.loading, p.loaded, p.register = false, true, e.page
			d.startPlane(e.page.plane)
		}
		d.startChannel(e.ch)
	case refDataReady:
		d.toHost = d.link(d.cfg.Host.CardToHost, d.toHost, e.cmd.bytes)
		d.at(d.toHost+d.linkLatency(d.cfg.Host.CardToHost), refEvent{op: refCommandDone, cmd: e.cmd})
	case refCommandDone:
		d.outstanding--
		if d.left[e.cmd.id]--; d.left[e.cmd.id] == 0 {
			d.ends[e.cmd.id] = now
		}
		d.issue()
	}
}

// issue starts waiting commands while queue slots are free: each takes the
// next controller core in turn.
func (d *refDrive) issue() {
	for d.outstanding < d.cfg.QueueDepthMax && len(d.queue) > 0 {
		c := d.queue[0]
		d.queue = d.queue[1:]
		d.outstanding++
		done := max(d.eng.Now(), d.cores[d.core]) + d.cfg.CommandTime
		d.cores[d.core] = done
		d.core = (d.core + 1) % len(d.cores)
		d.at(done, refEvent{op: refControllerDone, cmd: &c})
	}
}

// admit takes waiting writes into the buffer, in order, while they fit
// (a write larger than the free space goes when the buffer is empty); each
// crosses the host link.
func (d *refDrive) admit() {
	for len(d.bufferWait) > 0 {
		c := d.bufferWait[0]
		if d.bufferUsed+c.bytes > d.cfg.WriteBufferBytes && d.bufferUsed > 0 {
			return
		}
		d.bufferWait = d.bufferWait[1:]
		d.bufferUsed += c.bytes
		d.toCard = d.link(d.cfg.Host.HostToCard, d.toCard, c.bytes)
		d.at(d.toCard+d.linkLatency(d.cfg.Host.HostToCard), refEvent{op: refWriteArrived, cmd: &c})
	}
}

// read queues a read command's pages at their planes.
func (d *refDrive) read(c *refCmd) {
	page := d.cfg.PageBytes
	first, last := c.addr/page, (c.addr+c.bytes-1)/page
	n := int(last - first + 1)
	c.pagesLeft = &n
	for pg := first; pg <= last; pg++ {
		q := int(pg % int64(len(d.planes)))
		piece := min(c.addr+c.bytes, (pg+1)*page) - max(c.addr, pg*page)
		d.planes[q].reads = append(d.planes[q].reads, refPage{plane: q, bytes: piece, cmd: c})
		d.startPlane(q)
	}
}

// startPlane starts an idle plane's next operation: the oldest read, else
// the program whose page is in its register; and it loads the register
// with the next program's page, over the channel, once it is free.
func (d *refDrive) startPlane(q int) {
	p := &d.planes[q]
	switch {
	case p.busy:
	case len(p.reads) > 0:
		p.busy = true
		d.at(d.eng.Now()+d.cfg.ReadTime, refEvent{op: refSensed, page: p.reads[0]})
		p.reads = p.reads[1:]
	case p.loaded:
		p.busy, p.loaded = true, false
		d.at(d.eng.Now()+d.prog, refEvent{op: refProgrammed, page: p.register})
	}
	if !p.loaded && !p.loading && len(p.programs) > 0 {
		p.loading = true
		ch := q % d.cfg.Channels
		p.load = append(p.load, p.programs[0])
		p.programs = p.programs[1:]
		d.startChannel(ch)
	}
}

// startChannel starts an idle channel's next transfer: read data first.
func (d *refDrive) startChannel(ch int) {
	c := &d.channels[ch]
	if c.busy {
		return
	}
	n := len(d.planes) / d.cfg.Channels
	for range n {
		p := &d.planes[ch+c.turn*d.cfg.Channels]
		c.turn = (c.turn + 1) % n
		var pg refPage
		var t sim.Time
		switch {
		case len(p.out) > 0:
			pg, p.out = p.out[0], p.out[1:]
			t = d.cfg.ChannelBandwidth.TransferTime(pg.bytes)
		case len(p.load) > 0:
			pg, p.load = p.load[0], p.load[1:]
			t = d.xfer
		default:
			continue
		}
		c.busy = true
		d.at(d.eng.Now()+t, refEvent{op: refChannelDone, page: pg, ch: ch})
		return
	}
}

// link serialises bytes on a link direction that is free at free and
// returns when the last byte has left.
func (d *refDrive) link(dir PCIeDirection, free sim.Time, bytes int64) sim.Time {
	cfg := d.cfg.Host.linkConfig(dir)
	return max(d.eng.Now(), free) + cfg.WireTime(bytes)
}

func (d *refDrive) linkLatency(dir PCIeDirection) sim.Time { return d.cfg.Host.linkConfig(dir).Latency }

// TestResolutionsAgainstReference holds both resolutions against the
// reference in every regime of driveRegimes.
func TestResolutionsAgainstReference(t *testing.T) {
	if testing.Short() {
		t.Skip("the reference works out every page event by event: seconds a regime")
	}
	forEachRegime(t, func(t *testing.T, r driveRegime, cfg SSDConfig, at []sim.Time, reqs []Request) {
		want := runRefDrive(cfg, at, reqs)
		require.Len(t, want, len(reqs), "the reference completes every request")
		for _, res := range []SSDResolution{ResolutionPage, ResolutionRequest} {
			t.Run(SSDResolutions.Name(res), func(t *testing.T) {
				c := cfg
				c.Resolution = res
				_, got, _ := runSSDWorkload(t, c, at, reqs)
				require.Len(t, got, len(reqs))
				requireWithin(t, latencyError(at, reqs, want, got), r.reference)
			})
		}
	})
}

// TestReferenceDrive checks the reference by hand on the tiny drive (two
// planes on two channels, tR 10 us, tPROG 100 us): an idle read costs
// what its stages add up to, as at the page level; a read of a plane with
// eight programs queued waits for the one in progress only (read
// priority), where first come first served would wait for all eight.
func TestReferenceDrive(t *testing.T) {
	cfg := tinySSD()
	cfg.WriteBufferBytes = 64 << 10
	link := cfg.Host.linkConfig(cfg.Host.CardToHost)
	fixed := cfg.CommandTime + cfg.ReadTime + cfg.ChannelBandwidth.TransferTime(4096) + cfg.ReadOverhead + link.WireTime(4096) + link.Latency

	idle := runRefDrive(cfg, []sim.Time{0}, []Request{{Addr: 0, Bytes: 4096}})
	_, page, _ := runSSDWorkload(t, cfg, []sim.Time{0}, []Request{{Addr: 0, Bytes: 4096}})
	assert.Equal(t, fixed, idle[0], "an idle read")
	assert.Equal(t, page[0], idle[0], "as at the page level")

	readAt := 250 * sim.Microsecond // plane 0 is programming its third page of eight
	at := []sim.Time{0, readAt}
	reqs := []Request{{Addr: 1 << 20, Bytes: 64 << 10, Write: true}, {Addr: 0, Bytes: 4096}}
	behind := runRefDrive(cfg, at, reqs)
	require.Len(t, behind, 2)
	wait := behind[1] - readAt - fixed
	t.Logf("the read waits %v for plane 0", wait)
	assert.Positive(t, wait, "plane 0 is busy")
	assert.Less(t, wait, cfg.ProgramTime, "no longer than the program in progress")
}
