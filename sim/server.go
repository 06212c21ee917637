package sim

import "fmt"

// Job is a unit of work for a Server: its service time and the event to
// raise when it completes.
type Job struct {
	Service Time
	Done    Event
}

type queuedJob struct {
	job     Job
	arrival Time
}

// Server is c identical servers in front of one FIFO queue (a G/G/c station).
// Each job brings its own service time; when it completes, its Done event is
// handled at the completion time.
type Server struct {
	eng     *Engine
	name    string
	servers int
	busy    int
	queue   FIFO[queuedJob]
	running Slots[Event] // Done events of the jobs in service

	busyGauge   *Gauge
	queueGauge  *Gauge
	wait        *Distribution
	sojourn     *Distribution
	arrivals    int64
	completions int64
}

// NewServer returns a station of servers identical servers; servers must be
// at least 1.
func NewServer(eng *Engine, name string, servers int) (*Server, error) {
	if servers < 1 {
		return nil, fmt.Errorf("server %q: server count %d must be at least 1", name, servers)
	}
	now := eng.Now()
	return &Server{eng: eng, name: name, servers: servers,
		busyGauge: NewGauge(now, 0), queueGauge: NewGauge(now, 0),
		wait: NewDistribution(), sojourn: NewDistribution()}, nil
}

// Name returns the station's name.
func (s *Server) Name() string { return s.name }

// Submit adds a job: it starts at once if a server is free, else it queues.
func (s *Server) Submit(j Job) {
	if j.Service < 0 {
		panic(fmt.Sprintf("sim: server %q at %v: negative service time %v", s.name, s.eng.Now(), j.Service))
	}
	s.arrivals++
	now := s.eng.Now()
	if s.busy < s.servers {
		s.start(queuedJob{job: j, arrival: now})
		return
	}
	s.queue.Push(queuedJob{job: j, arrival: now})
	s.queueGauge.Set(now, float64(s.queue.Len()))
}

// start puts a job in service. Completion events carry the job's arrival
// time so that its sojourn can be measured; the Done event is kept in a
// side table keyed by a slot index.
func (s *Server) start(q queuedJob) {
	now := s.eng.Now()
	s.busy++
	s.busyGauge.Set(now, float64(s.busy))
	s.wait.AddTime(now - q.arrival)
	slot := s.running.Put(q.job.Done)
	s.eng.After(q.job.Service, Event{Handler: s, Op: int32(slot), Arg: int64(q.arrival)})
}

// Handle completes the job whose slot and arrival the event carries.
func (s *Server) Handle(ev Event) {
	now := s.eng.Now()
	done := s.running.Take(int(ev.Op))
	s.busy--
	s.completions++
	s.sojourn.AddTime(now - Time(ev.Arg))
	if s.queue.Len() > 0 {
		next := s.queue.Pop()
		s.queueGauge.Set(now, float64(s.queue.Len()))
		s.start(next)
	} else {
		s.busyGauge.Set(now, float64(s.busy))
	}
	if done.Handler != nil {
		done.Handler.Handle(done)
	}
}

// Busy returns the number of servers in service.
func (s *Server) Busy() int { return s.busy }

// QueueLen returns the number of jobs waiting.
func (s *Server) QueueLen() int { return s.queue.Len() }

// ServerStats are a station's statistics up to a time.
type ServerStats struct {
	Arrivals, Completions int64
	// Utilisation is busy server-time over servers x elapsed time.
	Utilisation float64
	// MeanQueueLen is the time-averaged number of waiting jobs.
	MeanQueueLen float64
	// MeanInService is the time-averaged number of jobs in service.
	MeanInService float64
	// Wait is the waiting time (arrival to start of service) in ps.
	Wait Summary
	// Sojourn is the time in system (arrival to completion) in ps.
	Sojourn Summary
}

// Stats returns the statistics from the station's creation to t.
func (s *Server) Stats(t Time) ServerStats {
	inService := s.busyGauge.Mean(t)
	return ServerStats{Arrivals: s.arrivals, Completions: s.completions,
		Utilisation: inService / float64(s.servers), MeanQueueLen: s.queueGauge.Mean(t),
		MeanInService: inService, Wait: s.wait.Summary(), Sojourn: s.sojourn.Summary()}
}
