package kubernetes_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The API server gone for 30 s after the first list (its watch broken,
// every list and watch refused): the ring stays as it was, the errors are
// counted, and once the server is back a change made meanwhile arrives.
func TestWatchRidesOutAnAPIServerOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := slice(svc, "geecache-a", v4, httpPort(8080),
			pod{name: "geecache-1", ip: "10.244.1.5", ready: true}, pod{name: "geecache-2", ip: "10.244.2.7", ready: true})
		cs := fake.NewClientset(a)
		var down atomic.Bool
		unavailable := errors.New("connection refused")
		watchers := make(chan *watch.RaceFreeFakeWatcher, 100)
		cs.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
			return down.Load(), nil, unavailable
		})
		cs.PrependWatchReactor("endpointslices", func(k8stesting.Action) (bool, watch.Interface, error) {
			if down.Load() {
				return true, nil, unavailable
			}
			w := watch.NewRaceFreeFake()
			watchers <- w
			return true, w, nil
		})
		p := newPeers(t, "http://10.244.1.5:8080")
		st := start(t, cs, p, nil)
		wantAddrs(t, p, "http://10.244.1.5:8080", "http://10.244.2.7:8080")

		synctest.Wait()
		down.Store(true)
		gone := apierrors.NewServiceUnavailable("the API server is gone").Status()
		(<-watchers).Error(&gone)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.1.5:8080", "http://10.244.2.7:8080")
		if st.Updates.Load() != 1 || st.Errors.Load() < 2 {
			t.Fatalf("after 30 s without the API server: %d updates (want 1), %d errors (want the failed lists)", st.Updates.Load(), st.Errors.Load())
		}

		// Back, with a change made meanwhile: geecache-2 is terminating.
		b := slice(svc, "geecache-a", v4, httpPort(8080),
			pod{name: "geecache-1", ip: "10.244.1.5", ready: true}, pod{name: "geecache-2", ip: "10.244.2.7", ready: true, terminating: true})
		b.ResourceVersion = "2"
		if err := cs.Tracker().Update(b.GroupVersionKind().GroupVersion().WithResource("endpointslices"), b, ns); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		down.Store(false)
		time.Sleep(time.Minute) // client-go's backoff, at most 30 s, before the next list
		synctest.Wait()
		wantAddrs(t, p, "http://10.244.1.5:8080")
	})
}
