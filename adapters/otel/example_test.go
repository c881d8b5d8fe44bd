package otel_test

import (
	"context"
	"fmt"
	"log/slog"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	geecacheotel "github.com/geecache/geecache/adapters/otel"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A group traced through an SDK TracerProvider, and its Stats published
// through an SDK MeterProvider. In a real program the providers export to
// a collector, and nodes also share a Propagator
// (nethttp.PoolOptions.Propagator: geecacheotel.NewPropagator(nil)).
func Example() {
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	tracer, err := geecacheotel.NewTracer(tp, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}),
		&cache.GroupOptions{Tracer: tracer, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	registration, err := geecacheotel.RegisterMetrics(mp.Meter("example"), reg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer registration.Unregister()

	for range 2 {
		v, _ := g.Get(ctx, "Tom")
		fmt.Println("Tom =", v.String())
	}
	for _, s := range spans.GetSpans() {
		line := "span " + s.Name
		for _, a := range s.Attributes {
			if a.Key == "geecache.hit" {
				line += " hit=" + a.Value.String()
			}
		}
		fmt.Println(line)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "geecache.gets" || m.Name == "geecache.local.loads" {
			fmt.Println(m.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
		}
	}
	// Output:
	// Tom = 630
	// Tom = 630
	// span geecache.load
	// span geecache.Get hit=false
	// span geecache.Get hit=true
	// geecache.gets 2
	// geecache.local.loads 1
}
