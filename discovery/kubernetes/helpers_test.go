package kubernetes_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/geecache/geecache/internal/testkit"
	"github.com/geecache/geecache/picker"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	ns  = "shop"
	svc = "geecache"
)

// pod is one endpoint as the EndpointSlice controller writes it for a
// pod of the Deployment.
type pod struct {
	name        string
	ip          string
	ready       bool // readiness probe passing
	terminating bool // deletionTimestamp set (rollout, scale-in, eviction)
}

func ptr[T any](v T) *T { return &v }

// slice is an EndpointSlice shaped like one the controller writes for
// Service service: its labels, owner, address type, named ports, and per
// endpoint the conditions (ready is false while terminating; serving
// follows the probe), node, zone and target Pod.
func slice(service, name string, family discoveryv1.AddressType, ports []discoveryv1.EndpointPort, pods ...pod) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, GenerateName: service + "-", ResourceVersion: "1",
			Labels: map[string]string{
				discoveryv1.LabelServiceName: service,
				discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
				"app.kubernetes.io/name":     service,
			},
			Annotations: map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": "2026-12-01T12:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Service", Name: service, UID: types.UID("svc-uid-" + service),
				Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		AddressType: family,
		Ports:       ports,
	}
	for i, p := range pods {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{p.ip},
			Conditions: discoveryv1.EndpointConditions{
				Ready:       ptr(p.ready && !p.terminating),
				Serving:     ptr(p.ready),
				Terminating: ptr(p.terminating),
			},
			NodeName:  ptr([]string{"node-a", "node-b", "node-c"}[i%3]),
			Zone:      ptr([]string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}[i%3]),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.name, UID: types.UID("pod-uid-" + p.name)},
		})
	}
	return s
}

// httpPort is the single named port of the example's Service.
func httpPort(n int32) []discoveryv1.EndpointPort {
	return []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(n), Protocol: ptr(corev1.ProtocolTCP)}}
}

func newPeers(t *testing.T, self string) *picker.Peers {
	t.Helper()
	p, err := picker.NewPeers(self, nil, &picker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// update writes s to the fake API server (create, update or delete).
func update(t *testing.T, cs *fake.Clientset, s *discoveryv1.EndpointSlice) {
	t.Helper()
	c := cs.DiscoveryV1().EndpointSlices(ns)
	ctx := context.Background()
	if _, err := c.Get(ctx, s.Name, metav1.GetOptions{}); err != nil {
		if _, err := c.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := c.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, cs *fake.Clientset, name string) {
	t.Helper()
	if err := cs.DiscoveryV1().EndpointSlices(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// peerSet is what the tests watch: a picker.Peers, or a nethttp.Pool.
type peerSet interface {
	Set(addrs ...string) error
	Addrs() []string
}

// sameAddrs reports whether p's ring is exactly want (self included).
func sameAddrs(p peerSet, want ...string) bool {
	w := slices.Clone(want)
	slices.Sort(w)
	return slices.Equal(p.Addrs(), slices.Compact(w))
}

func wantAddrs(t *testing.T, p peerSet, want ...string) {
	t.Helper()
	if !sameAddrs(p, want...) {
		t.Fatalf("ring = %v, want %v", p.Addrs(), want)
	}
}

var _ = testkit.WaitFor
