package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraceHooks(t *testing.T) {
	eng := NewEngine(0)
	assert.False(t, eng.Trace().Enabled(), "no sink, no tracing")
	l, err := NewLink(eng, "pcie", LinkConfig{Bandwidth: GBps, Latency: 5})
	require.NoError(t, err)
	l.Transfer(10, Event{}) // not recorded: no sink yet
	rec := &SpanRecorder{}
	eng.Trace().AddSink(rec)
	assert.True(t, eng.Trace().Enabled())
	l.Transfer(20, Event{Arg: 7})
	assert.Equal(t, []Span{{Component: "pcie", Operation: "transfer", ID: 7, Start: 10 * Nanosecond, End: 30*Nanosecond + 5, Bytes: 20}}, rec.Spans)
}

// stagesOnly is a StageSink.
type stagesOnly struct{ SpanRecorder }

func (*stagesOnly) StagesOnly() {}

func TestStageSinkLeavesDeviceSpansOut(t *testing.T) {
	var tr Tracer
	assert.False(t, tr.AllSpans())
	tr.AddSink(&stagesOnly{})
	assert.True(t, tr.Enabled())
	assert.False(t, tr.AllSpans(), "a stage sink alone takes no device span")
	tr.AddSink(&SpanRecorder{})
	assert.True(t, tr.AllSpans())
}
