package cache

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/geecache/geecache/getter"
)

// Errors returned by Registry.NewGroup.
var (
	ErrGroupExists  = errors.New("geecache: group already exists")
	ErrInvalidGroup = errors.New("geecache: invalid group")
)

// A Registry holds one node's groups by name, so that a transport serving
// peers can find the group a request names. Each node has its own
// Registry; there is no global one, so several nodes with the same group
// names can live in one process.
type Registry struct {
	mu     sync.RWMutex
	groups map[string]*Group
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{groups: make(map[string]*Group)}
}

// An Option configures a Group.
type Option func(*Group)

// WithPeers sets where the group fetches keys it does not own. Without it
// the group loads every key itself.
func WithPeers(p PeerPicker) Option {
	return func(g *Group) { g.peers = p }
}

// WithLogger sets the logger for the group's rare events (a peer failing,
// a load panicking). The default is slog.Default(). The hit path never
// logs.
func WithLogger(l *slog.Logger) Option {
	return func(g *Group) { g.log = l }
}

// NewGroup creates a group named name that loads values with g and keeps
// at most cacheBytes bytes of keys and values in memory (a cacheBytes of 0
// or less keeps nothing, but still shares concurrent loads). It returns an
// error wrapping ErrGroupExists if the registry has a group of that name,
// and ErrInvalidGroup for an empty name or a nil Getter.
func (r *Registry) NewGroup(name string, cacheBytes int64, g getter.Getter, opts ...Option) (*Group, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: empty name", ErrInvalidGroup)
	}
	if g == nil {
		return nil, fmt.Errorf("%w: group %q has a nil Getter", ErrInvalidGroup, name)
	}
	grp := &Group{name: name, getter: g, mem: newMemory(cacheBytes, false)}
	for _, opt := range opts {
		opt(grp)
	}
	if grp.log == nil {
		grp.log = slog.Default()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.groups[name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrGroupExists, name)
	}
	r.groups[name] = grp
	return grp, nil
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
	names := make([]string, 0, len(r.groups))
	for n := range r.groups {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
