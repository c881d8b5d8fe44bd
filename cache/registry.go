package cache

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/ratelog"
)

// ErrConfig is wrapped by the error of every GeeCache constructor (and of
// lambda.ConfigFromEnv and Pool.Set) given settings that cannot work, in
// this package and in every binding: errors.Is(err, cache.ErrConfig) tells
// a configuration mistake, to be fixed before starting again, from a
// failure at run time. It lives here, in the core, because every package
// can import it.
var ErrConfig = errors.New("invalid configuration")

// A Registry holds one node's groups by name, so that a transport serving
// peers can find the group a request names. Each node has its own
// Registry; there is no global one, so several nodes with the same group
// names can live in one process. The zero value is an empty Registry ready
// to use; NewRegistry is the same as new(Registry).
type Registry struct {
	mu     sync.RWMutex
	groups map[string]*Group
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return new(Registry) }

// NewGroup creates a group named name that loads values with g and keeps
// at most cacheBytes bytes of keys and values in memory (0 keeps nothing,
// but concurrent loads are still shared). opts may be nil for the
// defaults. It returns an error wrapping ErrConfig if the registry has
// a group of that name, and ErrConfig for an empty name, a nil Getter
// (including a nil function or pointer inside the interface) or a negative
// cacheBytes.
func (r *Registry) NewGroup(name string, cacheBytes int64, g getter.Getter, opts *GroupOptions) (*Group, error) {
	if name == "" {
		return nil, fmt.Errorf("geecache: %w: empty name", ErrConfig)
	}
	if isNil(g) {
		return nil, fmt.Errorf("geecache: %w: group %q has a nil Getter", ErrConfig, name)
	}
	if cacheBytes < 0 {
		return nil, fmt.Errorf("geecache: %w: group %q: cacheBytes %d is negative", ErrConfig, name, cacheBytes)
	}
	var o GroupOptions
	if opts != nil {
		o = *opts
	}
	if isNil(o.Peers) {
		o.Peers = nil
	}
	if isNil(o.Tracer) {
		o.Tracer = nil
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	policy, err := o.PeerPolicy.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.TTL < 0 || o.NotFoundTTL < 0 || o.StaleWhileRevalidate < 0 {
		return nil, fmt.Errorf("geecache: %w: group %q: TTL, NotFoundTTL and StaleWhileRevalidate must not be negative", ErrConfig, name)
	}
	grp := &Group{name: name, getter: g, peers: o.Peers, log: o.Logger, tracer: o.Tracer,
		mem: newMemory(cacheBytes, o.CountOverhead), policy: policy, latency: newLatencies(policy), batchLatency: newLatencies(policy)}
	grp.fresh.init(&o, g)
	grp.forwardFlight.NewPanic, grp.localFlight.NewPanic = newPanicError, newPanicError
	grp.warn = ratelog.New(o.Logger, time.Second, nil)
	grp.health.policy = policy
	grp.router, _ = o.Peers.(fallbackPicker)
	if _, ok := o.Peers.(PeerLister); ok {
		grp.health.list = grp.peerList
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.groups[name]; ok {
		return nil, fmt.Errorf("geecache: %w: group %q already exists", ErrConfig, name)
	}
	if r.groups == nil {
		r.groups = make(map[string]*Group)
	}
	r.groups[name] = grp
	return grp, nil
}

// isNil reports whether v is nil or an interface holding a nil pointer,
// function, map, slice, channel or interface: a value that would panic
// when called.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// Lookup returns the group named name, or nil if there is none.
func (r *Registry) Lookup(name string) *Group {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.groups[name]
}

// Names returns the names of the registry's groups, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.groups))
}
