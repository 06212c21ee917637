package memory

import (
	"fmt"

	"github.com/kvcosim/kvcosim/sim"
)

// Device is anything that serves Requests.
type Device interface {
	Access(Request)
	// Traffic is what the device has read and written so far: one way
	// for every device to report it, so no caller needs its type.
	Traffic() Traffic
}

// Traffic is a device's bytes read and written, how long its path to the
// host was busy carrying reads (0 where the model has no such path), and
// when the writes it has acknowledged have all reached the medium
// (DrainedAt: the SSD's write buffer empties then; 0 where a write is on
// the medium when acknowledged). A run's simulated time runs to the
// latest DrainedAt as well as to its last event.
type Traffic struct {
	BytesRead, BytesWritten int64
	ReadBusy, DrainedAt     sim.Time
	// WriteBusy is a drive's host link's time moving writes (SSDs and
	// their stripes; ReadBusy is its time moving reads).
	WriteBusy sim.Time
}

// RemoteStore is a storage device reached over a network (a shared pool
// behind 100 Gb/s RDMA, say): a read sends a request message and gets the
// data back; a write sends the data and gets an acknowledgement.
type RemoteStore struct {
	eng      *sim.Engine
	store    Device
	out, in  *sim.Link
	ops      sim.Slots[remoteOp]
	msgBytes int64
}

type remoteOp struct {
	req   Request
	phase int
}

// NewRemoteStore puts a network of the given rate and one-way latency in
// front of store; both directions are independent links.
func NewRemoteStore(eng *sim.Engine, name string, store Device, bandwidth sim.Bandwidth, latency sim.Time) (*RemoteStore, error) {
	cfg := sim.LinkConfig{Bandwidth: bandwidth, Latency: latency}
	out, err := sim.NewLink(eng, name+".to-pool", cfg)
	if err != nil {
		return nil, fmt.Errorf("network %q: %w", name, err)
	}
	in, err := sim.NewLink(eng, name+".from-pool", cfg)
	if err != nil {
		return nil, err
	}
	return &RemoteStore{eng: eng, store: store, out: out, in: in, msgBytes: 64}, nil
}

// Traffic is the pool device's: what crossed the network to it is read
// and written there.
func (r *RemoteStore) Traffic() Traffic { return r.store.Traffic() }

// Access sends the request over the network to the pool.
func (r *RemoteStore) Access(req Request) {
	id := int64(r.ops.Put(remoteOp{req: req}))
	bytes := r.msgBytes
	if req.Write {
		bytes = req.Bytes
	}
	r.out.Transfer(bytes, sim.Event{Handler: r, Arg: id})
}

// Handle moves a request through the pool and back.
func (r *RemoteStore) Handle(ev sim.Event) {
	op := r.ops.At(int(ev.Arg))
	op.phase++
	switch op.phase {
	case 1:
		req := op.req
		req.Done = sim.Event{Handler: r, Arg: ev.Arg}
		r.store.Access(req)
	case 2:
		bytes := r.msgBytes
		if !op.req.Write {
			bytes = op.req.Bytes
		}
		r.in.Transfer(bytes, sim.Event{Handler: r, Arg: ev.Arg})
	default:
		done := r.ops.Take(int(ev.Arg)).req.Done
		if done.Handler != nil {
			done.Handler.Handle(done)
		}
	}
}

// Links returns the two directions' totals.
func (r *RemoteStore) Links() (toPool, fromPool sim.LinkStats) { return r.out.Stats(), r.in.Stats() }
