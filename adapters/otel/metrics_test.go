package otel

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// point is one collected measurement: instrument, attributes, value.
type point struct {
	name, group, cache, peer string
	value                    int64
}

// collect reads r and returns its geecache measurements by
// name/group/cache, checking each instrument's unit and kind on the way.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[point]bool {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	units := map[string]string{
		"geecache.gets": "{get}", "geecache.hits": "{hit}", "geecache.peer.requests": "{request}",
		"geecache.peer.loads": "{load}", "geecache.peer.errors": "{error}", "geecache.fallback.loads": "{load}",
		"geecache.abandoned.loads": "{load}", "geecache.local.loads": "{load}", "geecache.load.errors": "{error}",
		"geecache.dedup.waits": "{get}", "geecache.cache.size": "By", "geecache.cache.items": "{item}",
		"geecache.cache.evictions": "{eviction}", "geecache.hedges": "{load}", "geecache.hedge.wins": "{load}",
		"geecache.ejected.loads": "{load}", "geecache.peer.busy": "{load}", "geecache.stale.serves": "{get}",
		"geecache.refreshes": "{load}", "geecache.refresh.failures": "{error}", "geecache.next.peer": "{load}",
		"geecache.handoffs": "{key}", "geecache.handoff.misses": "{request}", "geecache.handoff.served": "{request}",
		"geecache.offered": "{key}", "geecache.taken.over": "{key}",
	}
	// Instruments by peer have points only once a group has fetched from a
	// peer.
	peerUnits := map[string]string{"geecache.peer.ejected": "{peer}", "geecache.peer.ejections": "{ejection}",
		"geecache.peer.inflight": "{request}"}
	got := map[point]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			want, ok := units[m.Name]
			if pu, isPeer := peerUnits[m.Name]; isPeer {
				want, ok = pu, true
			}
			if !ok {
				t.Errorf("unexpected instrument %s", m.Name)
				continue
			}
			delete(units, m.Name)
			if m.Unit != want || m.Description == "" {
				t.Errorf("%s: unit %q, description %q; want unit %q and a description", m.Name, m.Unit, m.Description, want)
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Errorf("%s is a %T; want an int64 sum", m.Name, m.Data)
				continue
			}
			upDown := m.Name == "geecache.cache.size" || m.Name == "geecache.cache.items" ||
				m.Name == "geecache.peer.ejected" || m.Name == "geecache.peer.inflight"
			if sum.IsMonotonic == upDown || sum.Temporality != metricdata.CumulativeTemporality {
				t.Errorf("%s: monotonic %v, temporality %v; want monotonic %v, cumulative", m.Name, sum.IsMonotonic, sum.Temporality, !upDown)
			}
			for _, dp := range sum.DataPoints {
				g, _ := dp.Attributes.Value(groupKey)
				c, _ := dp.Attributes.Value(cacheKey)
				pa, _ := dp.Attributes.Value(peerKey)
				if node, _ := dp.Attributes.Value("node"); node.AsString() != "n1" {
					t.Errorf("%s: point without the extra attribute node=n1: %v", m.Name, dp.Attributes.ToSlice())
				}
				p := point{m.Name, g.AsString(), c.AsString(), pa.AsString(), dp.Value}
				if got[p] {
					t.Errorf("duplicate point %+v", p)
				}
				got[p] = true
			}
		}
	}
	if len(rm.ScopeMetrics) > 0 && len(units) > 0 {
		t.Errorf("instruments missing: %v", units)
	}
	return got
}

// groupCounters names the instrument of each group-wide counter of
// cache.Stats, by field (TestEveryStatsCounterIsPublished checks that none
// is left out).
var groupCounters = map[string]string{
	"Gets": "geecache.gets", "PeerRequests": "geecache.peer.requests", "PeerLoads": "geecache.peer.loads",
	"PeerErrors": "geecache.peer.errors", "FallbackLoads": "geecache.fallback.loads", "Abandoned": "geecache.abandoned.loads",
	"LocalLoads": "geecache.local.loads", "LoadErrors": "geecache.load.errors", "DedupWaits": "geecache.dedup.waits",
	"Hedges": "geecache.hedges", "HedgeWins": "geecache.hedge.wins", "EjectedLoads": "geecache.ejected.loads",
	"PeerBusy": "geecache.peer.busy", "StaleServes": "geecache.stale.serves", "Refreshes": "geecache.refreshes",
	"RefreshFails": "geecache.refresh.failures", "NextPeer": "geecache.next.peer", "Handoffs": "geecache.handoffs",
	"HandoffMisses": "geecache.handoff.misses", "HandoffServed": "geecache.handoff.served",
	"Offered": "geecache.offered", "TakenOver": "geecache.taken.over",
}

// docs/operations.md, "Observability": RegisterMetrics publishes every counter
// of Stats(). Each int64 field of cache.Stats (Hits is the sum of the
// caches' geecache.hits) has an instrument, which TestMetricsMatchStats
// then compares with the field.
func TestEveryStatsCounterIsPublished(t *testing.T) {
	st := reflect.TypeFor[cache.Stats]()
	for i := range st.NumField() {
		f := st.Field(i)
		if f.Type.Kind() != reflect.Int64 || f.Name == "Hits" {
			continue
		}
		if _, ok := groupCounters[f.Name]; !ok {
			t.Errorf("cache.Stats.%s is published by no instrument", f.Name)
		}
	}
}

// expected lists the points Stats of g should give.
func expected(g *cache.Group) []point {
	s := g.Stats()
	n := g.Name()
	var ps []point
	sv := reflect.ValueOf(s)
	for field, name := range groupCounters {
		ps = append(ps, point{name, n, "", "", sv.FieldByName(field).Int()})
	}
	for _, p := range s.Peers {
		ejected := int64(0)
		if p.Ejected {
			ejected = 1
		}
		ps = append(ps,
			point{"geecache.peer.ejected", n, "", p.Addr, ejected},
			point{"geecache.peer.ejections", n, "", p.Addr, p.Ejections},
			point{"geecache.peer.inflight", n, "", p.Addr, p.InFlight})
	}
	for _, c := range []struct {
		name string
		s    cache.CacheStats
	}{{"main", s.Main}, {"hot", s.Hot}} {
		ps = append(ps,
			point{"geecache.hits", n, c.name, "", c.s.Hits},
			point{"geecache.cache.size", n, c.name, "", c.s.Bytes},
			point{"geecache.cache.items", n, c.name, "", c.s.Items},
			point{"geecache.cache.evictions", n, c.name, "", c.s.Evictions})
	}
	return ps
}

func TestMetricsMatchStats(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	reg := cache.NewRegistry()
	a := newGroup(t, reg, "a", nil, nil)
	opts := &MetricsOptions{Attributes: []attribute.KeyValue{attribute.String("node", "n1")}}
	r, err := RegisterMetrics(mp.Meter("test"), reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Attributes[0] = attribute.String("node", "changed") // copied: no effect
	// A group created after RegisterMetrics is published too; its owner
	// peer fails for "remote-fail…" keys.
	b := newGroup(t, reg, "b", nil, &remote{addr: "http://peer"})
	bad := newGroup(t, cache.NewRegistry(), "bad", nil, &remote{addr: "http://peer", err: errors.New("down")})

	ctx := context.Background()
	for _, k := range []string{"x", "x", "x", "y", "missing-1", "fail-1"} {
		_, _ = a.Get(ctx, k)
	}
	_ = reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpGet, Group: "a", Keys: []string{"z"}}, discard{}) // a peer's request
	for _, k := range []string{"remote-1", "remote-1", "remote-2", "x"} {
		_, _ = b.Get(ctx, k)
	}
	_, _ = bad.Get(ctx, "remote-1")

	got := collect(t, reader)
	sa, sb := a.Stats(), b.Stats()
	// The Stats are what the scenario above makes them, so that the
	// comparison below checks non-zero values of every kind.
	if sa.Gets != 6 || sa.Main.Hits != 2 || sa.LocalLoads != 5 || sa.LoadErrors != 1 || sa.PeerRequests != 1 ||
		sa.Main.Items != 3 || sa.Main.Bytes == 0 || sb.Hot.Hits != 1 || sb.Hot.Items != 2 || sb.PeerLoads != 2 {
		t.Fatalf("the scenario gave Stats a=%+v b=%+v", sa, sb)
	}
	want := append(expected(a), expected(b)...)
	for _, p := range want {
		if !got[p] {
			t.Errorf("missing point %+v", p)
		}
	}
	if len(got) != len(want) {
		t.Errorf("collected %d points; want %d (groups a and b only): %v", len(got), len(want), got)
	}

	// Later activity shows in the next collection.
	_, _ = a.Get(ctx, "x")
	if got := collect(t, reader); !got[point{"geecache.hits", "a", "main", "", sa.Main.Hits + 1}] {
		t.Errorf("second collection: no geecache.hits a/main = %d", sa.Main.Hits+1)
	}

	if err := r.Unregister(); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("after Unregister: %d points", len(got))
	}
}

func TestMetricsFallbackCounters(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	reg := cache.NewRegistry()
	g := newGroup(t, reg, "f", nil, &remote{addr: "http://peer", err: errors.New("down")})
	if _, err := RegisterMetrics(mp.Meter("test"), reg, &MetricsOptions{Attributes: []attribute.KeyValue{attribute.String("node", "n1")}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"remote-1", "remote-2", "remote-1"} {
		if _, err := g.Get(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	got := collect(t, reader)
	for _, p := range []point{
		{"geecache.peer.errors", "f", "", "", 2},
		{"geecache.fallback.loads", "f", "", "", 2},
		{"geecache.local.loads", "f", "", "", 2},
		{"geecache.hits", "f", "main", "", 1},
		{"geecache.gets", "f", "", "", 3},
		{"geecache.peer.inflight", "f", "", "http://peer", 0},
	} {
		if !got[p] {
			t.Errorf("missing point %+v", p)
		}
	}
	for _, p := range expected(g) {
		if !got[p] {
			t.Errorf("missing point %+v (from Stats)", p)
		}
	}
}

func TestRegisterMetricsRefusesNil(t *testing.T) {
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	_, err := RegisterMetrics(nil, cache.NewRegistry(), nil)
	wantConfigErr(t, "nil meter", err)
	_, err = RegisterMetrics(mp.Meter("test"), nil, nil)
	wantConfigErr(t, "nil registry", err)
}

// Collections run while groups are created and used (run with -race).
func TestMetricsConcurrentCollect(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	reg := cache.NewRegistry()
	if _, err := RegisterMetrics(mp.Meter("test"), reg, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			g, err := reg.NewGroup(fmt.Sprintf("g%d", i), 1<<10, getter.Func(source), &cache.GroupOptions{Logger: quiet})
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 20 {
				_, _ = g.Get(context.Background(), fmt.Sprintf("k%d", j))
			}
		}
	}()
	var rm metricdata.ResourceMetrics
	for range 50 {
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
	}
	<-done
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "geecache.gets" {
			if n := len(m.Data.(metricdata.Sum[int64]).DataPoints); n != 20 {
				t.Errorf("geecache.gets has %d points; want one per group, 20", n)
			}
		}
	}
}
