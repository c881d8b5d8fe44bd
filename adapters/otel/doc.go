// Package otel connects GeeCache to OpenTelemetry: the counters of
// cache.Group.Stats as metrics, the steps of a Get as spans, and the W3C
// trace context carried from node to node over the peer protocol, so that
// one trace shows a Get on the node that was asked and the load on the
// node that owns the key.
//
// It uses the OpenTelemetry API only (go.opentelemetry.io/otel/metric,
// trace, propagation, attribute, codes): the application chooses and
// configures the SDK and exporters, and passes in its MeterProvider's
// Meter and its TracerProvider. The package keeps no state of its own
// outside the values it returns, and reads no global OpenTelemetry
// setting unless the application passes one in (otel.GetTracerProvider(),
// say).
//
// The three parts are independent:
//
//   - RegisterMetrics publishes every counter of Stats, for every group of
//     a cache.Registry, as asynchronous instruments read at each
//     collection.
//   - NewTracer returns a cache.Tracer; set it as cache.GroupOptions.Tracer.
//   - NewPropagator returns a protocol.Propagator; set it in the options of
//     every node of a cluster (nethttp.PoolOptions.Propagator, or the
//     Peers options of a Lambda node).
//
// The package is named otel like its directory. A file that also imports
// go.opentelemetry.io/otel renames one of the two, for example
//
//	import geecacheotel "github.com/geecache/geecache/adapters/otel"
//
// Configuration follows the rest of GeeCache (see cache.GroupOptions):
// required arguments, then a pointer to an options struct in which nil
// means all defaults and a zero field means its default.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/operations.md
package otel
