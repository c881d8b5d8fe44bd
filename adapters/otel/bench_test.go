package otel

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/geecache/geecache/cache"
)

// BenchmarkHit measures a hit without a Tracer, and with one over the SDK
// (spans sampled and exported to a no-op exporter, or not sampled) and
// over the API's no-op provider. Compare allocs/op:
//
//	go test -run '^$' -bench Hit -benchmem -benchtime 20000x ./adapters/otel/
func BenchmarkHit(b *testing.B) {
	sampled := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	defer sampled.Shutdown(context.Background())
	defer unsampled.Shutdown(context.Background())
	for _, c := range []struct {
		name   string
		tracer func() cache.Tracer
	}{
		{"untraced", func() cache.Tracer { return nil }},
		{"sdk-sampled", func() cache.Tracer { t, _ := NewTracer(sampled, nil); return t }},
		{"sdk-unsampled", func() cache.Tracer { t, _ := NewTracer(unsampled, nil); return t }},
		{"noop", func() cache.Tracer { t, _ := NewTracer(noop.NewTracerProvider(), nil); return t }},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := newGroup(b, nil, "g", c.tracer(), nil)
			ctx := context.Background()
			if _, err := g.Get(ctx, "k"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Get(ctx, "k"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCollect measures one collection of the metrics of 10 groups.
func BenchmarkCollect(b *testing.B) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	reg := cache.NewRegistry()
	for i := range 10 {
		newGroup(b, reg, string(rune('a'+i)), nil, nil)
	}
	if _, err := RegisterMetrics(mp.Meter("bench"), reg, nil); err != nil {
		b.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	b.ReportAllocs()
	for b.Loop() {
		if err := reader.Collect(context.Background(), &rm); err != nil {
			b.Fatal(err)
		}
	}
}
