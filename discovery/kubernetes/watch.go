package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	informers "k8s.io/client-go/informers/discovery/v1"
	k8s "k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// defaultDebounce is the Options.Debounce used when it is zero.
const defaultDebounce = 200 * time.Millisecond

// maxDebounce bounds Options.Debounce: a terminating pod must leave the
// rings well within a second.
const maxDebounce = time.Second

// Options configures [Watch]. The zero value suits a Service with one port
// whose peers speak HTTP (nethttp.Pool).
type Options struct {
	// Port is the name of the Service port the peers listen on, as in the
	// Service's spec.ports[].name. Empty means the slice's only TCP port
	// (a slice with several is then skipped, and the log says why).
	Port string

	// AddressType is the address family put on the ring,
	// discoveryv1.AddressTypeIPv4 or AddressTypeIPv6. Empty means the
	// family of the peer set's own address (its Self, when that is an IP),
	// else IPv4 when the Service has any IPv4 slice, else IPv6. Every node
	// must use the same family, and its own address must be of it, or the
	// node finds itself on the ring under another name.
	AddressType discoveryv1.AddressType

	// Address turns an endpoint's IP (canonical form) and port into the
	// address given to the peer set's Set; it must give each node the
	// address the node has as its own Self. Nil means
	// "http://IP:PORT" ("http://[IP]:PORT" for IPv6), nethttp.Pool's
	// form; set it for https or a base path.
	Address func(ip string, port int32) string

	// Debounce is how long changes are gathered before the peer set is
	// replaced once for all of them. Zero means 200ms; at most 1s.
	Debounce time.Duration

	// Stats, when not nil, counts what Watch does.
	Stats *Stats

	// Logger receives the changes applied (at Info); the endpoints
	// skipped, the lists not applied and the informer's list and watch
	// errors (at Warn; a list with no ready endpoint before the first good
	// one, as on a fresh deploy, at Info); and what client-go logs of its
	// own while it runs the informer (instead of klog's global logger;
	// its verbosity V(n) is the slog level -n, so V(4) is Debug). Nil
	// means slog.Default(). Watch's own Info lines are those two: a change
	// of the cluster moves keys between nodes, which an operator reading
	// the log wants to see, and it is rare (debounced; nothing is logged
	// while the endpoints stay the same).
	Logger *slog.Logger
}

// Stats counts what a [Watch] does, for monitoring: a growing Kept or
// Errors is a problem the ring is riding out on its last good list. Read
// its fields at any time (they are atomic).
type Stats struct {
	// Updates counts the lists given to Set (changes only).
	Updates atomic.Uint64
	// Kept counts the empty lists refused: the peer set kept its last
	// good list instead.
	Kept atomic.Uint64
	// Errors counts the informer's failed lists and watches (client-go
	// retries them with backoff) and the lists that Set refused.
	Errors atomic.Uint64
}

// watcher is one running Watch.
type watcher struct {
	peers    interface{ Set(addrs ...string) error }
	lister   toolscache.Indexer
	family   discoveryv1.AddressType
	port     string
	address  func(string, int32) string
	debounce time.Duration
	log      *slog.Logger
	attrs    []slog.Attr // namespace and service, on every record (len == cap: append copies)
	stats    *Stats
	kick     chan struct{}
	last     []string // the list last given to Set; only the loop touches it
}

// Watch keeps peers in step with the EndpointSlices of the Service named
// service in namespace, read through client, until ctx is done (see the
// package doc for what goes on the ring): it runs an informer on them and
// replaces the list with peers.Set (a *picker.Peers, an *nethttp.Pool and
// a *lambda.Peers all fit) as soon as the informer has listed the slices,
// then after every change, debounced. An empty list never empties the
// ring: the last good one stays, and Watch logs it and counts it in
// opts.Stats. If peers has a Self method (all three do), the family of
// that address is the default Options.AddressType.
//
// Watch blocks; run it in its own goroutine. It returns an error wrapping
// ctx's error when ctx is done, once the informer's goroutines have
// stopped, or at once an error wrapping [cache.ErrConfig] for a nil
// client or peers, an empty service or namespace, or options that cannot
// work. Every error it returns starts with "geecache: ", as the main
// module's do.
func Watch(ctx context.Context, peers interface{ Set(addrs ...string) error }, client k8s.Interface, namespace, service string, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case client == nil || peers == nil:
		return fmt.Errorf("geecache: discovery/kubernetes: %w: Watch needs a client and a peer set", cache.ErrConfig)
	case service == "" || namespace == "":
		// An empty namespace would be every namespace: Services of one
		// name in several of them would be merged, and it needs a
		// ClusterRole.
		return fmt.Errorf("geecache: discovery/kubernetes: %w: Watch needs a Service name and its namespace", cache.ErrConfig)
	case o.Debounce < 0 || o.Debounce > maxDebounce:
		return fmt.Errorf("geecache: discovery/kubernetes: %w: Options.Debounce %v is not within [0, %v]", cache.ErrConfig, o.Debounce, maxDebounce)
	case o.AddressType != "" && o.AddressType != discoveryv1.AddressTypeIPv4 && o.AddressType != discoveryv1.AddressTypeIPv6:
		return fmt.Errorf("geecache: discovery/kubernetes: %w: Options.AddressType %q is neither IPv4 nor IPv6", cache.ErrConfig, o.AddressType)
	}
	w := &watcher{
		peers: peers, family: o.AddressType, port: o.Port, address: o.Address, debounce: o.Debounce, log: o.Logger,
		attrs: []slog.Attr{slog.String("namespace", namespace), slog.String("service", service)},
		stats: o.Stats, kick: make(chan struct{}, 1),
	}
	if s, ok := peers.(interface{ Self() string }); ok && w.family == "" {
		w.family = selfFamily(s.Self())
	}
	if w.address == nil {
		w.address = defaultAddress
	}
	if w.debounce == 0 {
		w.debounce = defaultDebounce
	}
	if w.log == nil {
		w.log = slog.Default()
	}
	if w.stats == nil {
		w.stats = new(Stats)
	}

	selector := labels.Set{discoveryv1.LabelServiceName: service}.String()
	inf := informers.NewFilteredEndpointSliceInformer(client, namespace, 0, toolscache.Indexers{},
		func(lo *metav1.ListOptions) { lo.LabelSelector = selector })
	w.lister = inf.GetIndexer()
	if err := inf.SetWatchErrorHandlerWithContext(w.watchError); err != nil {
		return fmt.Errorf("geecache: discovery/kubernetes: %w", err) // only fails once started
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.poke() },
		UpdateFunc: func(any, any) { w.poke() },
		DeleteFunc: func(any) { w.poke() },
	})
	if err != nil {
		return fmt.Errorf("geecache: discovery/kubernetes: %w", err)
	}
	// client-go logs through the logger of the context it runs with (the
	// reflector's warnings, its unhandled errors): give it Options.Logger,
	// so that nothing of Watch goes to klog's global logger and stderr.
	klogger := logr.FromSlogHandler(w.log.With(attrsAny(w.attrs)...).Handler())
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(klog.NewContext(ctx, klogger)) })
	w.loop(ctx, reg.HasSyncedChecker().Done())
	wg.Wait()
	return fmt.Errorf("geecache: discovery/kubernetes: watching the EndpointSlices of %s/%s: %w", namespace, service, ctx.Err())
}

// poke tells the loop that the slices changed.
func (w *watcher) poke() {
	select {
	case w.kick <- struct{}{}:
	default: // a change is pending already
	}
}

// loop applies the first list as soon as the informer has synced, and
// every later change at most once per debounce period: the first change
// after a quiet time starts the period, later ones join it, so a change
// waits no longer than one period however busy the Service is.
func (w *watcher) loop(ctx context.Context, synced <-chan struct{}) {
	select {
	case <-synced:
	case <-ctx.Done():
		return
	}
	select { // the first list is applied now, without waiting
	case <-w.kick:
	default:
	}
	w.apply(ctx)

	var fire <-chan time.Time
	var t *time.Timer
	for {
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return
		case <-w.kick:
			if fire == nil {
				t = time.NewTimer(w.debounce)
				fire = t.C
			}
		case <-fire:
			fire = nil
			w.apply(ctx)
		}
	}
}

// apply computes the peer list from the informer's slices and gives it to
// Set if it changed and is not empty.
func (w *watcher) apply(ctx context.Context) {
	objs := w.lister.List()
	all := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			all = append(all, s)
		}
	}
	set := compute(all, w.family, w.port, w.address)
	if len(set.problems) > 0 {
		w.log.LogAttrs(ctx, slog.LevelWarn, "geecache: kubernetes: endpoints skipped",
			append(w.attrs, slog.Any("problems", set.problems))...)
	}

	switch {
	case len(set.addrs) == 0:
		w.stats.Kept.Add(1)
		// Before any list (the first pod of a Deployment, not ready yet)
		// there is nothing to keep, and nothing is wrong.
		level := slog.LevelWarn
		if w.last == nil {
			level = slog.LevelInfo
		}
		w.log.LogAttrs(ctx, level, "geecache: kubernetes: no ready endpoint; keeping the last good peer list",
			append(w.attrs, slog.Int("slices", len(all)), slog.Any("kept", w.last))...)
		return
	case slices.Equal(set.addrs, w.last):
		return
	}
	if err := w.peers.Set(set.addrs...); err != nil {
		w.stats.Errors.Add(1)
		w.log.LogAttrs(ctx, slog.LevelWarn, "geecache: kubernetes: peer list refused; keeping the last good one",
			append(w.attrs, slog.Any("error", err))...)
		return
	}
	w.log.LogAttrs(ctx, slog.LevelInfo, "geecache: kubernetes: peers updated",
		append(w.attrs, slog.Any("peers", set.addrs), slog.Any("before", w.last))...)
	w.last = set.addrs
	w.stats.Updates.Add(1)
}

// watchError logs a failed list or watch of the informer (client-go
// retries it with backoff) and counts it.
func (w *watcher) watchError(ctx context.Context, _ *toolscache.Reflector, err error) {
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return // stopping
	}
	w.stats.Errors.Add(1)
	attrs := append(w.attrs, slog.Any("error", err))
	if apierrors.IsForbidden(err) {
		attrs = append(attrs, slog.String("hint",
			`the pod's ServiceAccount needs a Role allowing list and watch on "endpointslices" in "discovery.k8s.io"`))
	}
	w.log.LogAttrs(ctx, slog.LevelWarn, "geecache: kubernetes: listing or watching EndpointSlices failed", attrs...)
}

// attrsAny is attrs as the arguments of slog.Logger.With.
func attrsAny(attrs []slog.Attr) []any {
	out := make([]any, len(attrs))
	for i, a := range attrs {
		out[i] = a
	}
	return out
}
