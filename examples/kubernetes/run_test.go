package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/testkit"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// runNode runs the program on 127.0.0.1 and returns its base URL, a
// cancel (SIGTERM) and the channel run's error arrives on.
func runNode(t *testing.T, discovery, service string, client *fake.Clientset, log *slog.Logger, args ...string) (string, context.CancelFunc, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"POD_IP": "127.0.0.1", "POD_NAMESPACE": "shop", "GEECACHE_SECRET": "s3cret", "GEECACHE_DISCOVERY": discovery}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	cfg, err := parseFlags(append([]string{"-listen=127.0.0.1:" + port, "-drain=2s", "-delay=1ms", "-service=" + service}, args...),
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, ln, client, log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("run did not return")
		}
	})
	return "http://" + ln.Addr().String(), cancel, done
}

// The program serves the API and its probes, with either discovery; on
// SIGTERM its readiness probe fails while it drains, then it returns.
func TestRunServesAndDrains(t *testing.T) {
	for _, discovery := range []string{discoveryDNS, discoveryEndpointSlices} {
		t.Run(discovery, func(t *testing.T) {
			client := fake.NewClientset()
			var logs testkit.Buffer
			base, stop, done := runNode(t, discovery, "geecache-peers", client, slog.New(slog.NewTextHandler(&logs, nil)),
				// With -dns-server no search list applies: the node asks the
				// name a Pod's search list makes of the Service's.
				"-dns-server="+dnsServer(t, "geecache-peers.shop.svc.cluster.local"))
			port, _ := strconv.Atoi(base[strings.LastIndex(base, ":")+1:])
			_, err := client.DiscoveryV1().EndpointSlices("shop").Create(context.Background(), &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Name: "geecache-peers-x", Namespace: "shop", Labels: map[string]string{discoveryv1.LabelServiceName: "geecache-peers"}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Name: ptr(peerPortName), Port: ptr(int32(port)), Protocol: ptr(corev1.ProtocolTCP)}},
				Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, "the node to find itself", func() bool {
				// The discovery's line of the change it applied (the peer
				// set's own "peers set" is Debug).
				return strings.Contains(logs.String(), `peers=[`+base+`]`)
			})
			testkit.WaitFor(t, "the node to be ready", func() bool {
				resp, err := http.Get(base + pathReady)
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			})
			if code, body := get(t, base+"/api?key=Tom"); code != http.StatusOK || body != "630\n" {
				t.Fatalf("Tom: %d %q", code, body)
			}
			if code, body := get(t, base+"/api?key=kkk"); code != http.StatusNotFound || body != "kkk not exist\n" {
				t.Fatalf("kkk: %d %q", code, body)
			}
			if code, _ := get(t, base+pathHealth); code != http.StatusOK {
				t.Fatalf("liveness: %d", code)
			}
			stop()
			if code, _ := get(t, base+pathReady); code != http.StatusServiceUnavailable {
				// the drain has begun by now or will in a moment
				testkit.WaitFor(t, "readiness to fail", func() bool {
					c, _ := get(t, base+pathReady)
					return c == http.StatusServiceUnavailable
				})
			}
			if code, body := get(t, base+"/api?key=Tom"); code != http.StatusOK || body != "630\n" {
				t.Fatalf("Tom while draining: %d %q", code, body)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				done <- nil
			case <-time.After(10 * time.Second):
				t.Fatal("run did not return after the drain")
			}
		})
	}
}

// What the program refuses, with the reason on stderr.
func TestParseFlagsRefuses(t *testing.T) {
	base := map[string]string{"POD_IP": "10.0.0.1", "POD_NAMESPACE": "shop", "GEECACHE_SECRET": "s"}
	for name, tc := range map[string]struct {
		args  []string
		unset string
		want  string
	}{
		"no secret":                            {nil, "GEECACHE_SECRET", "GEECACHE_SECRET is empty"},
		"no pod IP":                            {nil, "POD_IP", "no -self and no $POD_IP"},
		"unknown discovery":                    {[]string{"-discovery=consul"}, "", `-discovery "consul"`},
		"slices, no namespace":                 {[]string{"-discovery=endpointslices"}, "POD_NAMESPACE", "needs -namespace"},
		"bad listen":                           {[]string{"-listen=8080"}, "", "-listen"},
		"dns server, short name, no namespace": {[]string{"-dns-server=127.0.0.1:53"}, "POD_NAMESPACE", "needs -namespace"},
		"dns server without a port":            {[]string{"-dns-server=dns.example"}, "", "-dns-server"},
	} {
		var stderr strings.Builder
		_, err := parseFlags(tc.args, func(k string) string {
			if k == tc.unset {
				return ""
			}
			return base[k]
		}, &stderr)
		if err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: err %v, stderr %q, want %q", name, err, stderr.String(), tc.want)
		}
	}
	cfg, err := parseFlags(nil, func(k string) string { return map[string]string{"POD_IP": "fd00::5", "GEECACHE_SECRET": "s"}[k] }, io.Discard)
	if err != nil || cfg.self != "http://[fd00::5]:8080" {
		t.Errorf("IPv6 pod: self %q, %v", cfg.self, err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal("unreachable")
	}
}

// Discovery that cannot start (here: a -self without a port, so DNS has
// no port for the records) stops the program with its error, so that the
// pod crashes where an operator sees it, instead of serving as a node
// alone that loads every key itself.
func TestRunStopsWhenDiscoveryCannotStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GEECACHE_SECRET": "s3cret"}
	cfg, err := parseFlags([]string{"-listen=" + ln.Addr().String(), "-self=http://127.0.0.1", "-dns-server=127.0.0.1:1", "-namespace=shop", "-drain=1s"},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run(context.Background(), cfg, ln, nil, slog.New(slog.DiscardHandler)) }()
	select {
	case err := <-done:
		if !errors.Is(err, cache.ErrConfig) {
			t.Fatalf("run = %v, want the discovery's configuration error", err)
		}
	case <-time.After(10 * time.Second): // a bound on the wait: it returns at once when right
		t.Fatal("run kept serving without its discovery")
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Error("the listener still accepts after run returned")
	}
}
