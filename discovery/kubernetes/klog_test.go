package kubernetes_test

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/discovery/kubernetes"
	"github.com/geecache/geecache/internal/testkit"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// What client-go's informer logs of its own (here: a watch that ends
// with an error it does not retry at once) goes to Options.Logger, with
// the namespace and the Service, not to klog's stderr in another format:
// the package's log is slog alone.
func TestClientGoLogsGoToOptionsLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(slice(svc, "geecache-a", v4, httpPort(8080), pod{name: "geecache-1", ip: "10.244.1.5", ready: true}))
		watchers := make(chan *watch.RaceFreeFakeWatcher, 10)
		cs.PrependWatchReactor("endpointslices", func(k8stesting.Action) (bool, watch.Interface, error) {
			w := watch.NewRaceFreeFake()
			watchers <- w
			return true, w, nil
		})
		var logs testkit.Buffer
		p := newPeers(t, "")
		start(t, cs, p, &kubernetes.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		bad := apierrors.NewBadRequest("the watch is refused").Status()
		(<-watchers).Error(&bad)
		<-watchers // client-go lists and watches again
		time.Sleep(time.Second)
		synctest.Wait()
		var line string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "watch ended with error") {
				line = l
			}
		}
		if !strings.Contains(line, "the watch is refused") || !strings.Contains(line, "namespace=shop") || !strings.Contains(line, "service=geecache") {
			t.Fatalf("client-go's log line is not in Options.Logger with the namespace and Service:\n%s", logs.String())
		}
		wantAddrs(t, p, "http://10.244.1.5:8080")
	})
}
