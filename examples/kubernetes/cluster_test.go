package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/internal/testkit"
	"github.com/geecache/geecache/picker"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Two nodes of the program find each other through the EndpointSlices of
// their Service (one slice per node here, since each listens on its own
// port of 127.0.0.1) and share the keys: a key asked of either node is
// looked up in the slow database by its owner alone, over signed peer
// requests, for present and missing keys.
func TestTwoNodesOverEndpointSlices(t *testing.T) {
	bases, logs, _, _ := twoNodes(t)
	ring := ringOf(t, bases[:]...)
	owned := [2]int{}
	for k := range 20 {
		key := "k" + strconv.Itoa(k)
		for from := range bases {
			if code, body := get(t, bases[from]+"/api?key="+key); code != http.StatusNotFound || body != key+" not exist\n" {
				t.Fatalf("node %d, %s: %d %q", from, key, code, body)
			}
		}
		o := 0
		if ring.Owner(key) == bases[1] {
			o = 1
		}
		owned[o]++
		lookup := func(n int) string { return `msg="[SlowDB] search key" node=` + bases[n] + " key=" + key + "\n" }
		if !strings.Contains(logs[o].String(), lookup(o)) || strings.Contains(logs[1-o].String(), lookup(1-o)) {
			t.Fatalf("%s (owner node %d) was not looked up by its owner alone:\n%s\n---\n%s", key, o, logs[0].String(), logs[1].String())
		}
	}
	if code, body := get(t, bases[0]+"/api?key=Tom"); code != http.StatusOK || body != "630\n" {
		t.Fatalf("Tom: %d %q", code, body)
	}
	if owned[0] == 0 || owned[1] == 0 {
		t.Logf("every key had one owner (%v): the test proved less this run", owned)
	}
}

// twoNodes runs two nodes of the program that find each other through
// the EndpointSlices of their Service (one slice per node, since each
// listens on its own port of 127.0.0.1) and returns when both see both:
// their base URLs, logs, stops (SIGTERM) and the channels of run's error.
func twoNodes(t *testing.T) (bases [2]string, logs *[2]testkit.Buffer, stops [2]context.CancelFunc, dones [2]chan error) {
	t.Helper()
	client := fake.NewClientset()
	logs = new([2]testkit.Buffer)
	for i := range bases {
		bases[i], stops[i], dones[i] = runNode(t, discoveryEndpointSlices, "geecache-peers", client, slog.New(slog.NewTextHandler(&logs[i], nil)))
		port, _ := strconv.Atoi(bases[i][strings.LastIndex(bases[i], ":")+1:])
		_, err := client.DiscoveryV1().EndpointSlices("shop").Create(context.Background(), &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "geecache-peers-" + strconv.Itoa(i), Namespace: "shop",
				Labels: map[string]string{discoveryv1.LabelServiceName: "geecache-peers"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr(peerPortName), Port: ptr(int32(port)), Protocol: ptr(corev1.ProtocolTCP)}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range logs {
		testkit.WaitFor(t, "node "+strconv.Itoa(i)+" to see both", func() bool {
			return strings.Contains(logs[i].String(), "peers updated") &&
				strings.Contains(logs[i].String(), bases[0]) && strings.Contains(logs[i].String(), bases[1])
		})
	}
	return bases, logs, stops, dones
}

// ringOf is the ring of the nodes at bases, as every node builds it.
func ringOf(t *testing.T, bases ...string) *picker.Peers {
	t.Helper()
	ring, err := picker.NewPeers("", nil, &picker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		err = ring.Set(bases...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// lookedUp reports whether the node at base logged a lookup of key in the
// slow database.
func lookedUp(logs *testkit.Buffer, base, key string) bool {
	return strings.Contains(logs.String(), `msg="[SlowDB] search key" node=`+base+" key="+key+"\n")
}

// After SIGTERM a node leaves (its readiness probe fails), then drains: for
// the drain its own API's Gets of the keys it owns go to the next node on
// the ring, which looks them up in the database (present and missing
// keys), not the node that is leaving; it still answers them, and returns
// once the drain is over.
func TestSIGTERMLeavesThenDrainsThroughTheNextNode(t *testing.T) {
	bases, logs, stops, dones := twoNodes(t)
	ring := ringOf(t, bases[:]...)
	var missing []string // keys node 0 owns, none in the database
	for k := 0; len(missing) < 3 && k < 1000; k++ {
		if key := "absent" + strconv.Itoa(k); ring.Owner(key) == bases[0] {
			missing = append(missing, key)
		}
	}
	var present []string // the database's keys node 0 owns
	for key := range scores() {
		if ring.Owner(key) == bases[0] {
			present = append(present, key)
		}
	}
	stops[0]()
	testkit.WaitFor(t, "node 0 to leave (readiness 503)", func() bool {
		code, _ := get(t, bases[0]+pathReady)
		return code == http.StatusServiceUnavailable
	})
	// Pool.Drain starts just after the probe fails.
	testkit.WaitFor(t, "node 0 to drain", func() bool {
		return strings.Contains(logs[0].String(), "geecache: leaving, draining")
	})
	for _, key := range missing {
		if code, body := get(t, bases[0]+"/api?key="+key); code != http.StatusNotFound || body != key+" not exist\n" {
			t.Fatalf("%s while draining: %d %q", key, code, body)
		}
	}
	for _, key := range present {
		if code, body := get(t, bases[0]+"/api?key="+key); code != http.StatusOK || body != scores()[key]+"\n" {
			t.Fatalf("%s while draining: %d %q", key, code, body)
		}
	}
	for _, key := range append(missing, present...) {
		if lookedUp(&logs[0], bases[0], key) || !lookedUp(&logs[1], bases[1], key) {
			t.Errorf("%s (owned by the draining node 0) was not looked up by node 1 alone:\n%s\n---\n%s", key, logs[0].String(), logs[1].String())
		}
	}
	if len(missing) == 0 {
		t.Fatal("node 0 owns none of 1000 keys")
	}
	if len(present) == 0 {
		t.Logf("node 0 owns none of the database's keys this run: only missing keys were checked")
	}
	select {
	case err := <-dones[0]:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		dones[0] <- nil
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after the drain")
	}
}
