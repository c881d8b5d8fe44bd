package cache

import (
	"context"
	"log/slog"
	"time"
)

// GroupOptions configures a Group. Every package of GeeCache is configured
// the same way: a constructor takes the required arguments and then a
// pointer to an options struct of its own, in which the zero value of each
// field means its documented default and a nil pointer means all defaults.
// A struct per constructor, rather than functional options shared by
// several constructors, makes an option that does not apply a compile
// error instead of a setting that is silently ignored, and go doc shows
// every option beside the thing it configures. A field whose value cannot
// work (a negative duration, say) makes the constructor fail.
type GroupOptions struct {
	// Peers tells the group which peer owns a key and fetches it from
	// there. Nil (the default, or a nil pointer inside the interface)
	// makes the group load every key itself.
	Peers PeerPicker

	// Logger receives the group's rare events: a peer failing, a load
	// panicking. Nil means slog.Default(). The hit path never logs.
	Logger *slog.Logger

	// TTL is how long a value stays fresh when its Getter does not say
	// (see getter.TTLGetter). 0 (the default): values do not expire, as
	// suits immutable or versioned keys.
	TTL time.Duration

	// NotFoundTTL, if positive, caches "not found" answers (this node's
	// Getter's, and an owner peer's) for that long, so that a flood of
	// requests for missing keys stops reaching the source. 0 (the default)
	// caches none: a key created later is found at once.
	NotFoundTTL time.Duration

	// StaleWhileRevalidate, if positive, is a window after a value expires
	// in which a Get returns it at once and one background refresh runs. If
	// the refresh fails, the stale value is served until the window ends
	// (serve-stale-on-error), and the key is refreshed again at most once
	// a second (plus up to 25% jitter), so that an outage of the source is
	// not met with a call per Get. A refresh that finds the key gone ("not
	// found") ends the stale value at once. 0 (the default): an expired
	// value is never served.
	StaleWhileRevalidate time.Duration

	// CountOverhead charges each entry its measured bookkeeping bytes on top
	// of its key and value, so that the process's memory follows the
	// budget (docs/configuration.md, "Memory"). Off by default: the budget
	// counts keys and values only.
	CountOverhead bool

	// PeerPolicy says when a failing peer is ejected, how many requests
	// may be in flight to one peer, and when a slow fetch is hedged with a
	// local load. The zero value is the defaults.
	PeerPolicy PeerPolicy

	// Tracer, if not nil, is told of every Get and of each step of a load
	// (package adapters/otel turns these into OpenTelemetry spans). Nil
	// (the default, or a nil pointer or function inside the interface)
	// costs the hit path nothing.
	Tracer Tracer
}

// The steps of a Get a Tracer is told of, by name (Tracer.Start's step).
// They are strings rather than a type of their own so that a tracer adapts
// them with a switch or uses them as span names as they are.
const (
	spanHit      = "hit"      // a Get answered from memory (started and ended at once)
	spanMiss     = "miss"     // a Get that had to load: the parent of the steps below
	spanPeer     = "peer"     // a fetch from the peer that owns the key (or the next live node)
	spanLoad     = "load"     // a call of the group's Getter on the owner
	spanFallback = "fallback" // a call of the Getter after the owner peer failed
)

// A Tracer observes the work of a group. The core has no tracing of its
// own (it stays free of any telemetry dependency); a Tracer adapts these
// calls to a tracing system. It must be safe for concurrent use.
type Tracer interface {
	// Start begins a step for key in group. step is one of "hit" (a Get
	// answered from memory, started and ended at once), "miss" (a Get that
	// had to load: the parent of the steps below), "peer" (a fetch from
	// the peer that owns the key, or the next live node), "load" (a call
	// of the group's Getter on the owner) and "fallback" (a call of the
	// Getter after the owner peer failed); a tracer should name an unknown
	// step as it is, since later versions may add steps. peer is the
	// address of the peer asked (its Peer's Addr(), for "peer"),
	// else "".
	// The returned context is passed to what the step calls (a
	// Peer, the Getter), so that trace context reaches them; the
	// returned Span is ended when the step ends.
	Start(ctx context.Context, step, group, key, peer string) (context.Context, Span)
}

// A Span is one step started by a Tracer.
type Span interface {
	// End ends the step; err is its error, or nil.
	End(err error)
}
