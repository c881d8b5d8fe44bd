package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

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
	client := fake.NewClientset()
	var logs [2]testkit.Buffer
	var bases [2]string
	for i := range bases {
		bases[i], _, _ = runNode(t, discoveryEndpointSlices, "geecache-peers", client, slog.New(slog.NewTextHandler(&logs[i], nil)))
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
	ring, err := picker.NewPeers("", nil, &picker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		err = ring.Set(bases[:]...)
	}
	if err != nil {
		t.Fatal(err)
	}
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
