package kubernetes_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/discovery/kubernetes"
	"github.com/geecache/geecache/internal/testkit"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A dual-stack Service has an IPv4 and an IPv6 slice for the same pods.
// The ring takes one family, that of the node's own address, so that no
// pod is on it twice; IPv6 addresses are bracketed.
func TestWatchDualStackTakesTheFamilyOfSelf(t *testing.T) {
	pods4 := []pod{{name: "geecache-1", ip: "10.244.1.5", ready: true}, {name: "geecache-2", ip: "10.244.2.7", ready: true}}
	pods6 := []pod{{name: "geecache-1", ip: "fd00:10:244:1::5", ready: true}, {name: "geecache-2", ip: "fd00:10:244:2::7", ready: true}}
	for _, tc := range []struct {
		name, self string
		opts       *kubernetes.Options
		want       []string
	}{
		{"self IPv4", "http://10.244.1.5:8080", nil, []string{"http://10.244.1.5:8080", "http://10.244.2.7:8080"}},
		{"self IPv6", "http://[fd00:10:244:1::5]:8080", nil, []string{"http://[fd00:10:244:1::5]:8080", "http://[fd00:10:244:2::7]:8080"}},
		{"client only", "", nil, []string{"http://10.244.1.5:8080", "http://10.244.2.7:8080"}},
		{"client only, IPv6 asked", "", &kubernetes.Options{AddressType: v6}, []string{"http://[fd00:10:244:1::5]:8080", "http://[fd00:10:244:2::7]:8080"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cs := fake.NewClientset(
					slice(svc, "geecache-v4", v4, httpPort(8080), pods4...),
					slice(svc, "geecache-v6", v6, httpPort(8080), pods6...))
				p := newPeers(t, tc.self)
				start(t, cs, p, tc.opts)
				want := tc.want
				if tc.self != "" {
					want = append(want, tc.self)
				}
				wantAddrs(t, p, want...)
			})
		})
	}
	// An IPv6-only Service, and a client that does not say: IPv6.
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(slice(svc, "geecache-v6", v6, httpPort(8080), pods6...))
		p := newPeers(t, "")
		start(t, cs, p, nil)
		wantAddrs(t, p, "http://[fd00:10:244:1::5]:8080", "http://[fd00:10:244:2::7]:8080")
	})
}

// A Service with a peer port and a metrics port: Options.Port names the
// one on the ring, whatever number it has in each slice (a named
// targetPort may resolve differently per pod, and the controller then
// writes one slice per number). Without a name such a slice is skipped,
// and the log says why.
func TestWatchPortByName(t *testing.T) {
	ports := func(peer int32) []discoveryv1.EndpointPort {
		return []discoveryv1.EndpointPort{
			{Name: ptr("metrics"), Port: ptr(int32(9090)), Protocol: ptr(corev1.ProtocolTCP)},
			{Name: ptr("dns"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolUDP)},
			{Name: ptr("http"), Port: ptr(peer), Protocol: ptr(corev1.ProtocolTCP)},
		}
	}
	objs := []runtime.Object{
		slice(svc, "geecache-a", v4, ports(8080), pod{name: "geecache-1", ip: "10.244.1.5", ready: true}),
		slice(svc, "geecache-b", v4, ports(8081), pod{name: "geecache-2", ip: "10.244.2.7", ready: true}),
	}
	synctest.Test(t, func(t *testing.T) {
		p := newPeers(t, "")
		start(t, fake.NewClientset(objs...), p, &kubernetes.Options{Port: "http"})
		wantAddrs(t, p, "http://10.244.1.5:8080", "http://10.244.2.7:8081")
	})
	synctest.Test(t, func(t *testing.T) {
		var logs testkit.Buffer
		p := newPeers(t, "")
		w := start(t, fake.NewClientset(objs...), p, &kubernetes.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		wantAddrs(t, p)
		if st := w; st.Kept.Load() != 1 || st.Updates.Load() != 0 {
			t.Fatalf("updates %d, kept %d", st.Updates.Load(), st.Kept.Load())
		}
		if !strings.Contains(logs.String(), "2 TCP ports and no Options.Port") {
			t.Fatalf("log does not say why:\n%s", logs.String())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		p := newPeers(t, "")
		start(t, fake.NewClientset(objs...), p, &kubernetes.Options{
			Port:    "http",
			Address: func(ip string, port int32) string { return "https://" + ip + ":" + "443/cache" },
		})
		wantAddrs(t, p, "https://10.244.1.5:443/cache", "https://10.244.2.7:443/cache")
	})
}

// Without the Role every list is Forbidden: Watch waits until its context
// ends, returns that error, logs the hint about the Role and counts the
// errors; it leaves no goroutine behind (goleak in TestMain).
func TestWatchForbiddenSaysWhichRole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(slice(svc, "geecache-a", v4, httpPort(8080), pod{name: "geecache-1", ip: "10.244.1.5", ready: true}))
		cs.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "",
				errors.New(`User "system:serviceaccount:shop:default" cannot list resource "endpointslices"`))
		})
		var logs testkit.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p := newPeers(t, "http://10.244.1.5:8080")
		var st kubernetes.Stats
		err := kubernetes.Watch(ctx, p, cs, ns, svc, &kubernetes.Options{Stats: &st, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Watch = %v, want the context's deadline", err)
		}
		if !strings.Contains(logs.String(), `needs a Role allowing list and watch on \"endpointslices\"`) {
			t.Fatalf("no hint about the Role in the log:\n%s", logs.String())
		}
		if st.Errors.Load() < 2 || st.Updates.Load() != 0 {
			t.Fatalf("errors %d (want a count of the retries), updates %d", st.Errors.Load(), st.Updates.Load())
		}
		wantAddrs(t, p, "http://10.244.1.5:8080")
	})
}

// A resync or a watch that breaks and is re-established delivers the same
// slices again: the ring is not rebuilt, and a change made while the
// watch was down is picked up when it comes back.
func TestWatchResyncAndBrokenWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := slice(svc, "geecache-a", v4, httpPort(8080), pod{name: "geecache-1", ip: "10.244.1.5", ready: true})
		cs := fake.NewClientset(a)
		watchers := make(chan *watch.RaceFreeFakeWatcher, 10)
		cs.PrependWatchReactor("endpointslices", func(k8stesting.Action) (bool, watch.Interface, error) {
			w := watch.NewRaceFreeFake()
			watchers <- w
			return true, w, nil
		})
		p := newPeers(t, "")
		w := start(t, cs, p, nil)
		wantAddrs(t, p, "http://10.244.1.5:8080")
		first := <-watchers

		// A resync: the same object again, a new resourceVersion only.
		again := a.DeepCopy()
		again.ResourceVersion = "2"
		first.Modify(again)
		time.Sleep(time.Second)
		synctest.Wait()
		if st := w; st.Updates.Load() != 1 {
			t.Fatalf("a resync rebuilt the ring: %d updates", st.Updates.Load())
		}

		// The watch breaks; meanwhile a pod becomes ready. The informer
		// lists again and watches again.
		b := slice(svc, "geecache-b", v4, httpPort(8080), pod{name: "geecache-2", ip: "10.244.2.7", ready: true})
		if err := cs.Tracker().Add(b); err != nil {
			t.Fatal(err)
		}
		gone := apierrors.NewResourceExpired("too old resource version").Status()
		first.Error(&gone)
		time.Sleep(5 * time.Second) // client-go's backoff before the new list
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.1.5:8080", "http://10.244.2.7:8080")
		if st := w; st.Updates.Load() != 2 {
			t.Fatalf("%d updates, want 2", st.Updates.Load())
		}
	})
}

// Options that cannot work fail at once with cache.ErrConfig.
func TestWatchConfigErrors(t *testing.T) {
	cs := fake.NewClientset()
	p := newPeers(t, "")
	for name, call := range map[string]func() error{
		"no client":    func() error { err := kubernetes.Watch(t.Context(), p, nil, ns, svc, nil); return err },
		"no peers":     func() error { err := kubernetes.Watch(t.Context(), nil, cs, ns, svc, nil); return err },
		"no service":   func() error { err := kubernetes.Watch(t.Context(), p, cs, ns, "", nil); return err },
		"no namespace": func() error { err := kubernetes.Watch(t.Context(), p, cs, "", svc, nil); return err },
		"debounce 2s": func() error {
			err := kubernetes.Watch(t.Context(), p, cs, ns, svc, &kubernetes.Options{Debounce: 2 * time.Second})
			return err
		},
		"debounce <0": func() error {
			err := kubernetes.Watch(t.Context(), p, cs, ns, svc, &kubernetes.Options{Debounce: -1})
			return err
		},
		"FQDN": func() error {
			err := kubernetes.Watch(t.Context(), p, cs, ns, svc, &kubernetes.Options{AddressType: "FQDN"})
			return err
		},
	} {
		err := call()
		if !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%s: err = %v, want cache.ErrConfig", name, err)
		}
		// docs/reads.md, "Errors": every error starts with "geecache: " once.
		if s := fmt.Sprint(err); !strings.HasPrefix(s, "geecache: discovery/kubernetes: ") || strings.Count(s, "geecache: ") != 1 {
			t.Errorf("%s: %q, want one \"geecache: discovery/kubernetes: \" prefix", name, s)
		}
	}
	// A valid Watch ends with its context's error, prefixed the same way.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := kubernetes.Watch(ctx, p, cs, ns, svc, nil)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "geecache: discovery/kubernetes: ") {
		t.Errorf("Watch with a done context: %v, want context.Canceled with the \"geecache: discovery/kubernetes: \" prefix", err)
	}
}

// The first pod of a new Deployment finds no ready endpoint (not even its
// own yet): that is logged at info level, since nothing is wrong; the same
// after a good list is a warning (TestWatchNeverEmptiesTheRing).
func TestWatchEmptyFirstListIsNoWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testkit.Buffer
		cs := fake.NewClientset(slice(svc, "geecache-a", v4, httpPort(8080), pod{name: "geecache-1", ip: "10.244.1.5"}))
		p := newPeers(t, "http://10.244.1.5:8080")
		st := start(t, cs, p, &kubernetes.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if st.Kept.Load() != 1 || !strings.Contains(logs.String(), `level=INFO msg="geecache: kubernetes: no ready endpoint`) ||
			strings.Contains(logs.String(), "level=WARN") {
			t.Fatalf("kept %d, log:\n%s", st.Kept.Load(), logs.String())
		}
		wantAddrs(t, p, "http://10.244.1.5:8080")
	})
}
