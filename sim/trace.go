package sim

// Attr is one key/value annotation of a span.
type Attr struct {
	Key   string
	Value string
}

// Span is one timed operation of a component: what it did, for which
// request or session, from when to when, and how many bytes it moved.
//
// A stage of a node's part (the host's request stages, the FPGA engine's
// stages, the accelerator's iterations) also says, typed, where it ran and
// what it was, so that readers never take Component or Operation apart:
// Part names the part ("cpu", "fpga": the emitting package's constants)
// and Node its node (the accelerator's iterations leave Node 0: their
// Component names it); Task is the operation ("query") and Stage its step ("hash",
// or the claim-2 outcome of a decision), Operation being Task, or
// Task/Stage when there is a step. A stage of a clocked engine has
// Clocked set and its clock cycles in Cycles.
type Span struct {
	Component string
	Operation string
	ID        int64
	Start     Time
	End       Time
	Bytes     int64
	Part      string
	Node      int
	Task      string
	Stage     string
	Clocked   bool
	Cycles    Cycles
	Attrs     []Attr
}

// Attr returns the value of the span's attribute key, or "".
func (s Span) Attr(key string) string {
	for _, a := range s.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// Sink receives spans; reports implement it to write traces.
type Sink interface {
	Span(s Span)
}

// Level is a component's levels at one moment (free regions, live links):
// counts that a VCD or a plot follows over time. A component emits one
// when they may have changed.
type Level struct {
	Component string
	At        Time
	Values    []Count
}

// Count is one named level.
type Count struct {
	Name  string
	Value int64
}

// Value returns the level's count name, or 0.
func (l Level) Value(name string) int64 {
	for _, c := range l.Values {
		if c.Name == name {
			return c.Value
		}
	}
	return 0
}

// LevelSink is a Sink that also takes levels: observers of spans and of
// levels register the same way, on the tracer.
type LevelSink interface {
	Sink
	Level(l Level)
}

// StageSink is a Sink that takes only stages (spans with Part set): a
// component whose spans are not stages (a device) need not build them
// when every sink is one, and may take paths that have none to give.
type StageSink interface {
	Sink
	StagesOnly()
}

// Tracer fans spans out to the registered sinks. Components test Enabled
// (a device, AllSpans) before building a span, so with no sink a trace
// point costs one check.
type Tracer struct {
	sinks []Sink
	all   bool // a sink takes spans that are not stages
}

// AddSink registers a sink.
func (t *Tracer) AddSink(s Sink) {
	t.sinks = append(t.sinks, s)
	if _, ok := s.(StageSink); !ok {
		t.all = true
	}
}

// Enabled reports whether any sink is registered.
func (t *Tracer) Enabled() bool { return len(t.sinks) > 0 }

// AllSpans reports whether a sink takes spans that are not stages.
func (t *Tracer) AllSpans() bool { return t.all }

// Emit passes s to every sink.
func (t *Tracer) Emit(s Span) {
	for _, k := range t.sinks {
		k.Span(s)
	}
}

// EmitLevel passes l to every sink that takes levels.
func (t *Tracer) EmitLevel(l Level) {
	for _, k := range t.sinks {
		if ls, ok := k.(LevelSink); ok {
			ls.Level(l)
		}
	}
}

// SpanRecorder is a Sink that keeps every span in memory, in emission order.
type SpanRecorder struct {
	Spans []Span
}

// Span records s.
func (r *SpanRecorder) Span(s Span) { r.Spans = append(r.Spans, s) }
