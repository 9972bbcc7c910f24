package otelpaykit

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// rig is an in-memory tracer and meter provider pair.
type rig struct {
	spans  *tracetest.SpanRecorder
	ends   chan string // names of ended spans, for waiting without sleeps
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader(), ends: make(chan string, 64)}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans),
		sdktrace.WithSpanProcessor(endSignal(r.ends)))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	return r
}

// endSignal is a span processor that reports each ended span's name.
type endSignal chan string

func (endSignal) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (e endSignal) OnEnd(s sdktrace.ReadOnlySpan) {
	select {
	case e <- s.Name():
	default: // nobody waits for that many
	}
}
func (endSignal) Shutdown(context.Context) error   { return nil }
func (endSignal) ForceFlush(context.Context) error { return nil }

// waitEnded waits until a span called name has ended: a server span ends
// after its answer has reached the client.
func (r *rig) waitEnded(t *testing.T, name string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case n := <-r.ends:
			if n == name {
				return
			}
		case <-timeout:
			t.Fatalf("span %s did not end", name)
		}
	}
}

// ended returns the ended spans in the order they ended.
func (r *rig) ended() []sdktrace.ReadOnlySpan { return r.spans.Ended() }

// metrics collects every metric of the module's scope by name.
func (r *rig) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// histPoint is a histogram point reduced to what tests compare.
type histPoint struct {
	Attrs map[string]any
	Count uint64
}

// hist returns a float histogram's points, sorted by their attributes.
func hist(t *testing.T, ms map[string]metricdata.Aggregation, name string) []histPoint {
	t.Helper()
	agg, ok := ms[name]
	require.True(t, ok, "no metric %s", name)
	h, ok := agg.(metricdata.Histogram[float64])
	require.True(t, ok, "%s is a %T", name, agg)
	var out []histPoint
	for _, dp := range h.DataPoints {
		require.GreaterOrEqual(t, dp.Sum, 0.0)
		out = append(out, histPoint{Attrs: setMap(dp.Attributes), Count: dp.Count})
	}
	sortPoints(out, func(p histPoint) map[string]any { return p.Attrs })
	return out
}

// sumPoint is a counter point reduced to what tests compare.
type sumPoint struct {
	Attrs map[string]any
	Value int64
}

// sum returns an int counter's points, sorted by their attributes.
func sum(t *testing.T, ms map[string]metricdata.Aggregation, name string) []sumPoint {
	t.Helper()
	agg, ok := ms[name]
	if !ok {
		return nil
	}
	s, ok := agg.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a %T", name, agg)
	require.True(t, s.IsMonotonic, "%s is a counter", name)
	var out []sumPoint
	for _, dp := range s.DataPoints {
		out = append(out, sumPoint{Attrs: setMap(dp.Attributes), Value: dp.Value})
	}
	sortPoints(out, func(p sumPoint) map[string]any { return p.Attrs })
	return out
}

// sortPoints orders points by their attributes; fmt prints maps sorted by
// key, which makes a stable order.
func sortPoints[P any](ps []P, attrs func(P) map[string]any) {
	sort.Slice(ps, func(i, j int) bool { return fmt.Sprint(attrs(ps[i])) < fmt.Sprint(attrs(ps[j])) })
}

func setMap(s attribute.Set) map[string]any {
	return attrMap(s.ToSlice())
}

// attrMap turns attributes into a map that require.Equal compares whole,
// so that an unexpected extra attribute fails a test too.
func attrMap(kv []attribute.KeyValue) map[string]any {
	out := make(map[string]any, len(kv))
	for _, a := range kv {
		out[string(a.Key)] = a.Value.AsInterface()
	}
	return out
}

// tree describes spans by name, indented by depth, children in start
// order: a readable picture of the parent/child structure to compare.
func tree(spans []sdktrace.ReadOnlySpan) []string {
	children := map[[8]byte][]sdktrace.ReadOnlySpan{}
	ids := map[[8]byte]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		p := s.Parent().SpanID()
		if s.Parent().IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var out []string
	var walk func(ss []sdktrace.ReadOnlySpan, indent string)
	walk = func(ss []sdktrace.ReadOnlySpan, indent string) {
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].StartTime().Before(ss[j].StartTime()) })
		for _, s := range ss {
			out = append(out, indent+s.Name()+" ("+s.SpanKind().String()+", "+s.Status().Code.String()+")")
			walk(children[s.SpanContext().SpanID()], indent+"  ")
		}
	}
	walk(roots, "")
	return out
}

// byName returns the ended spans called name, in start order.
func byName(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartTime().Before(out[j].StartTime()) })
	return out
}
