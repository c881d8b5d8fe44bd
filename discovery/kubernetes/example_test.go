package kubernetes_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/discovery/kubernetes"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A node of a Deployment behind the Service "geecache" keeps its Pool's
// peers in step with the Service's ready pods. In a pod the client comes
// from the ServiceAccount's token:
//
//	cfg, err := rest.InClusterConfig()             // k8s.io/client-go/rest
//	client, err := k8sclient.NewForConfig(cfg)     // k8s.io/client-go/kubernetes
//	self := "http://" + os.Getenv("POD_IP") + ":8080" // the downward API
//
// Here a fake API server holds the slice the EndpointSlice controller
// would write: two ready pods, one starting up.
func Example() {
	client := fake.NewClientset(slice(svc, "geecache-x7k2p", discoveryv1.AddressTypeIPv4, httpPort(8080),
		pod{name: "geecache-1", ip: "10.244.1.5", ready: true},
		pod{name: "geecache-2", ip: "10.244.2.7", ready: true},
		pod{name: "geecache-3", ip: "10.244.3.9", ready: false}))

	quiet := slog.New(slog.DiscardHandler)
	pool, err := nethttp.NewPool("http://10.244.1.5:8080", cache.NewRegistry(), &nethttp.PoolOptions{Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stats kubernetes.Stats
	done := make(chan error, 1)
	go func() { // it runs until ctx is done
		done <- kubernetes.Watch(ctx, pool, client, "shop", "geecache", &kubernetes.Options{Port: "http", Stats: &stats, Logger: quiet})
	}()
	for stats.Updates.Load() == 0 { // the first list, once the informer has listed the slices
		time.Sleep(time.Millisecond)
	}
	fmt.Println(pool.Addrs())
	stop()
	fmt.Println(errors.Is(<-done, context.Canceled))
	// Output:
	// [http://10.244.1.5:8080 http://10.244.2.7:8080]
	// true
}
