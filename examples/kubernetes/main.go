// Command kubernetes is a GeeCache node made to run as a Deployment
// behind a headless Service: it serves the peer protocol, a small API
// (GET /api?key=Tom, from the tutorial's slow database of scores) and its
// probes on one port, and finds its peers in the cluster either by DNS
// (the default: the headless Service's A records through package
// discovery/dns, asked again every 5 s, no permission needed)
// or by watching the Service's EndpointSlices (-discovery=endpointslices,
// which needs the Role in deploy/endpointslices.yaml and reacts to a pod
// that terminates within a second).
//
// The manifests in deploy/ run it (see docs/deploy-kubernetes.md):
//
//	kubectl create secret generic geecache --from-literal=secret="$(head -c 32 /dev/urandom | base64)"
//	kubectl apply -f deploy/geecache.yaml                 # DNS discovery
//	kubectl apply -f deploy/endpointslices.yaml           # or: EndpointSlices
//
// Flags (each defaults to an environment variable, as the manifests set
// them):
//
//	-listen ADDR       where to serve (default ":8080")
//	-self URL          this node's peer URL (default http://$POD_IP:PORT)
//	-discovery MODE    dns or endpointslices ($GEECACHE_DISCOVERY, default dns)
//	-service NAME      the headless Service ($GEECACHE_SERVICE, default geecache-peers);
//	                   DNS looks up this name, EndpointSlices watches its slices
//	-namespace NS      the Service's namespace ($POD_NAMESPACE)
//	-dns-server ADDR   the DNS server to ask (default: those of /etc/resolv.conf); without
//	                   a search list, a short -service is asked as NAME.NAMESPACE.svc.cluster.local
//	-drain D           how long the node keeps serving its peers after SIGTERM, for the
//	                   new owners of its keys to take them from its memory (default 10s)
//
// The peer secret is $GEECACHE_SECRET (from a Secret, never a flag, so ps
// never shows it); without one the node refuses to start, since its peers
// reach it over the pod network.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

func main() {
	log := newLogger(os.Stderr)
	// client-go's REST client logs through klog's global logger (client-side
	// throttling, API warnings): send it to the same JSON lines. A program
	// may set a global; the library never does (discovery/kubernetes passes
	// its Logger through the informer's context).
	klog.SetSlogLogger(log)
	cfg, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if err != nil {
		os.Exit(2)
	}
	var client k8s.Interface
	if cfg.discovery == discoveryEndpointSlices {
		rc, err := rest.InClusterConfig()
		if err == nil {
			client, err = k8s.NewForConfig(rc)
		}
		if err != nil {
			log.Error("geecache node did not start", "err", err)
			os.Exit(1)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, cfg, nil, client, log) // logs its exit
	stop()
	if err != nil {
		os.Exit(1)
	}
}

// newLogger returns the program's logger: JSON lines on w, with every
// duration as text ("10s", as time.Duration's String writes it) rather
// than a number of nanoseconds, the library's lines and client-go's
// included.
func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: durationAsText}))
}

// durationAsText is newLogger's slog.HandlerOptions.ReplaceAttr.
func durationAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
