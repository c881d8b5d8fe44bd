package kubernetes_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/discovery/kubernetes"
	"github.com/geecache/geecache/internal/testkit"
	"github.com/geecache/geecache/picker"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	v4 = discoveryv1.AddressTypeIPv4
	v6 = discoveryv1.AddressTypeIPv6
)

// start runs Watch until the test ends (and waits for it to return),
// and returns once Watch has applied or refused its first list. It works
// inside a synctest bubble and outside.
func start(t *testing.T, cs *fake.Clientset, p peerSet, opts *kubernetes.Options) *kubernetes.Stats {
	t.Helper()
	var o kubernetes.Options
	if opts != nil {
		o = *opts
	}
	if o.Stats == nil {
		o.Stats = new(kubernetes.Stats)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- kubernetes.Watch(ctx, p, cs, ns, svc, &o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v, want context.Canceled", err)
		}
	})
	for i := 0; o.Stats.Updates.Load()+o.Stats.Kept.Load() == 0; i++ {
		select {
		case err := <-done:
			t.Fatalf("Watch returned early: %v", err)
		default:
		}
		if i == 10000 {
			t.Fatal("Watch applied no first list within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	return o.Stats
}

// A Service of two slices (the controller splits them at 100 endpoints,
// or by port), with pods not ready yet, and another Service's slice in
// the same namespace: the ring is the ready pods of both slices, and
// nothing of the other Service.
func TestWatchMergesReadyEndpointsOfEverySlice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(
			slice(svc, "geecache-abcde", v4, httpPort(8080),
				pod{name: "geecache-1", ip: "10.244.1.5", ready: true},
				pod{name: "geecache-2", ip: "10.244.2.7", ready: false}),
			slice(svc, "geecache-fghij", v4, httpPort(8080),
				pod{name: "geecache-3", ip: "10.244.3.9", ready: true}),
			slice("other", "other-klmno", v4, httpPort(8080),
				pod{name: "other-1", ip: "10.244.1.6", ready: true}),
		)
		p := newPeers(t, "http://10.244.1.5:8080")
		w := start(t, cs, p, nil)
		wantAddrs(t, p, "http://10.244.1.5:8080", "http://10.244.3.9:8080")
		if st := w; st.Updates.Load() != 1 || st.Kept.Load() != 0 {
			t.Fatalf("updates %d, kept %d", st.Updates.Load(), st.Kept.Load())
		}

		// The second pod's probe passes: it joins within a debounce.
		update(t, cs, slice(svc, "geecache-abcde", v4, httpPort(8080),
			pod{name: "geecache-1", ip: "10.244.1.5", ready: true},
			pod{name: "geecache-2", ip: "10.244.2.7", ready: true}))
		time.Sleep(time.Second)
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.1.5:8080", "http://10.244.2.7:8080", "http://10.244.3.9:8080")
	})
}

// A rolling update of a Deployment of 3 (maxSurge 1, maxUnavailable 0):
// a new pod appears unready, becomes ready, an old one starts
// terminating (ready false, serving true while it drains) and is then
// deleted. The terminating pod leaves every node's ring within 1 s of the
// event (the target), long before it is deleted, and a
// terminating pod whose readiness is forced true (publishNotReadyAddresses)
// leaves too.
func TestWatchRolloutRemovesTerminatingWithinASecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := []pod{
			{name: "geecache-old-1", ip: "10.244.1.5", ready: true},
			{name: "geecache-old-2", ip: "10.244.2.7", ready: true},
			{name: "geecache-old-3", ip: "10.244.3.9", ready: true},
		}
		cs := fake.NewClientset(slice(svc, "geecache-abcde", v4, httpPort(8080), old...))
		nodes := []*picker.Peers{newPeers(t, "http://10.244.1.5:8080"), newPeers(t, "http://10.244.2.7:8080"), newPeers(t, "http://10.244.3.9:8080")}
		for _, p := range nodes {
			start(t, cs, p, nil)
		}
		all := []string{"http://10.244.1.5:8080", "http://10.244.2.7:8080", "http://10.244.3.9:8080"}
		for _, p := range nodes {
			wantAddrs(t, p, all...)
		}

		step := func(what string, pods []pod, want ...string) {
			t.Helper()
			update(t, cs, slice(svc, "geecache-abcde", v4, httpPort(8080), pods...))
			t0 := time.Now() // the bubble's clock
			for {
				synctest.Wait()
				agree := true
				for _, p := range nodes {
					agree = agree && sameAddrs(p, slices.Concat(want, []string{p.Self()})...)
				}
				if agree {
					break
				}
				if time.Since(t0) >= time.Second { // the target: within 1 s of the event
					for i, p := range nodes {
						t.Errorf("%s: node %d ring = %v, want %v", what, i, p.Addrs(), want)
					}
					t.FailNow()
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("%s: every ring right %v after the event", what, time.Since(t0))
			time.Sleep(time.Second) // and it stays so
			synctest.Wait()
			for i, p := range nodes {
				if !sameAddrs(p, slices.Concat(want, []string{p.Self()})...) {
					t.Fatalf("%s: node %d ring = %v later, want %v", what, i, p.Addrs(), want)
				}
			}
		}
		surge := pod{name: "geecache-new-1", ip: "10.244.1.20"}
		step("new pod unready", append(old, surge), all...)
		surge.ready = true
		step("new pod ready", append(old, surge), append(all, "http://10.244.1.20:8080")...)
		gone := old[2]
		gone.terminating = true
		step("old pod terminating", []pod{old[0], old[1], gone, surge},
			"http://10.244.1.5:8080", "http://10.244.2.7:8080", "http://10.244.1.20:8080")
		forced := gone
		forced.ready = true // slice() keeps ready false while terminating: force it as publishNotReadyAddresses does
		s := slice(svc, "geecache-abcde", v4, httpPort(8080), old[0], old[1], forced, surge)
		s.Endpoints[2].Conditions.Ready = ptr(true)
		update(t, cs, s)
		time.Sleep(time.Second)
		synctest.Wait()
		for i, p := range nodes[:2] {
			if strings.Contains(strings.Join(p.Addrs(), " "), "10.244.3.9") {
				t.Fatalf("node %d: a terminating endpoint marked ready is on the ring: %v", i, p.Addrs())
			}
		}
		step("old pod deleted", []pod{old[0], old[1], surge},
			"http://10.244.1.5:8080", "http://10.244.2.7:8080", "http://10.244.1.20:8080")
	})
}

// Ten changes within one debounce period rebuild the ring once.
func TestWatchDebouncesABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(slice(svc, "geecache-abcde", v4, httpPort(8080),
			pod{name: "geecache-0", ip: "10.244.0.1", ready: true}))
		p := newPeers(t, "")
		w := start(t, cs, p, &kubernetes.Options{Debounce: 500 * time.Millisecond})
		pods := []pod{{name: "geecache-0", ip: "10.244.0.1", ready: true}}
		before := w.Updates.Load()
		for i := 1; i <= 10; i++ {
			pods = append(pods, pod{name: "geecache-" + strconv.Itoa(i), ip: "10.244.0." + strconv.Itoa(i+1), ready: true})
			update(t, cs, slice(svc, "geecache-abcde", v4, httpPort(8080), pods...))
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := len(p.Addrs()); got != 11 {
			t.Fatalf("ring has %d nodes, want 11: %v", got, p.Addrs())
		}
		if st := w; st.Updates.Load()-before != 1 {
			t.Fatalf("the burst made %d updates, want 1", st.Updates.Load()-before)
		}
	})
}

// Every slice deleted (the Service removed, or the controller lagging),
// or every pod unready at once: the ring keeps its last good list, and
// the log and Stats.Kept say so. A slice deleted while another remains
// takes its endpoints with it.
func TestWatchNeverEmptiesTheRing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testkit.Buffer
		a := slice(svc, "geecache-abcde", v4, httpPort(8080), pod{name: "geecache-1", ip: "10.244.1.5", ready: true})
		b := slice(svc, "geecache-fghij", v4, httpPort(8080), pod{name: "geecache-2", ip: "10.244.2.7", ready: true})
		cs := fake.NewClientset(a, b)
		p := newPeers(t, "")
		w := start(t, cs, p, &kubernetes.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		wantAddrs(t, p, "http://10.244.1.5:8080", "http://10.244.2.7:8080")

		remove(t, cs, b.Name)
		time.Sleep(time.Second)
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.1.5:8080")

		update(t, cs, slice(svc, a.Name, v4, httpPort(8080), pod{name: "geecache-1", ip: "10.244.1.5", ready: false}))
		time.Sleep(time.Second)
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.1.5:8080")
		remove(t, cs, a.Name)
		time.Sleep(time.Second)
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.1.5:8080")
		if st := w; st.Kept.Load() != 2 {
			t.Fatalf("kept %d, want 2", st.Kept.Load())
		}
		if !strings.Contains(logs.String(), "keeping the last good peer list") {
			t.Fatalf("no warning logged:\n%s", logs.String())
		}

		// The Service comes back: its pods are used again.
		update(t, cs, b)
		time.Sleep(time.Second)
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.2.7:8080")
	})
}
