package kubernetes_test

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/geecache/geecache/discovery/kubernetes"
	"github.com/geecache/geecache/internal/testkit"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The conditions as k8s.io/api documents them: a nil ready "should be
// interpreted as true", a nil terminating as false, and serving is not
// what decides (ready is; terminating takes a pod out even when ready is
// forced true). Endpoints without an address, with an address of the
// other family, an endpoint listed in two slices, several addresses, and
// a slice whose ports do not name Options.Port: each is skipped or taken
// once, and what is skipped is logged.
func TestWatchConditionsAsTheAPIDocumentsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ep := func(ip string, ready, serving, terminating *bool, more ...string) discoveryv1.Endpoint {
			e := discoveryv1.Endpoint{Conditions: discoveryv1.EndpointConditions{Ready: ready, Serving: serving, Terminating: terminating}}
			if ip != "" {
				e.Addresses = append([]string{ip}, more...)
			}
			return e
		}
		t1, f := ptr(true), ptr(false)
		a := slice(svc, "geecache-a", v4, httpPort(8080))
		a.Endpoints = []discoveryv1.Endpoint{
			ep("10.244.0.1", nil, nil, nil),            // unknown everything: ready, not terminating
			ep("10.244.0.2", nil, nil, t1),             // terminating: out
			ep("10.244.0.3", t1, f, nil),               // ready decides, not serving
			ep("10.244.0.4", f, t1, f),                 // not ready: out
			ep("10.244.0.5", nil, f, f),                // nil ready is true
			ep("", t1, t1, f),                          // no address: skipped
			ep("10.244.0.6", t1, t1, f, "10.244.0.99"), // several: the first names it
			ep("fd00::7", t1, t1, f),                   // not IPv4: skipped, logged
			ep("10.244.0.8", t1, t1, t1),               // ready forced true, terminating: out
			ep("10.244.0.1", t1, t1, f),                // the same endpoint twice: once
		}
		b := slice(svc, "geecache-b", v4, httpPort(8080))
		b.Endpoints = []discoveryv1.Endpoint{ep("10.244.0.1", t1, t1, f), ep("10.244.0.9", t1, t1, f)}
		c := slice(svc, "geecache-c", v4, httpPort(9090))
		c.Ports[0].Name = ptr("metrics")
		c.Endpoints = []discoveryv1.Endpoint{ep("10.244.0.10", t1, t1, f)}

		var logs testkit.Buffer
		p := newPeers(t, "")
		start(t, fake.NewClientset(a, b, c), p, &kubernetes.Options{Port: "http", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		wantAddrs(t, p, "http://10.244.0.1:8080", "http://10.244.0.3:8080", "http://10.244.0.5:8080",
			"http://10.244.0.6:8080", "http://10.244.0.9:8080")
		for _, why := range []string{`address \"fd00::7\" is not IPv4`, `geecache-c: no TCP port named \"http\"`} {
			if !strings.Contains(logs.String(), why) {
				t.Errorf("the log does not say %s:\n%s", why, logs.String())
			}
		}
	})
}
