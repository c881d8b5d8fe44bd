package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/discovery/kubernetes"
	"github.com/geecache/geecache/picker"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// informerRules runs kubernetes.Watch against a fake API server through a
// first list, a watch, a broken watch and the list and watch after it,
// and returns the rules that allow exactly the requests it made.
func informerRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	var rules []rbacv1.PolicyRule
	synctest.Test(t, func(t *testing.T) {
		cs := fake.NewClientset(&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "geecache-peers-a", Namespace: "shop", Labels: map[string]string{discoveryv1.LabelServiceName: "geecache-peers"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr(peerPortName), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}}},
		})
		watchers := make(chan *watch.RaceFreeFakeWatcher, 10)
		cs.PrependWatchReactor("endpointslices", func(k8stesting.Action) (bool, watch.Interface, error) {
			w := watch.NewRaceFreeFake()
			watchers <- w
			return true, w, nil
		})
		peers, err := picker.NewPeers("http://10.244.1.5:8080", nil, &picker.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- kubernetes.Watch(ctx, peers, cs, "shop", "geecache-peers",
				&kubernetes.Options{Port: peerPortName, Logger: slog.New(slog.DiscardHandler)})
		}()
		first := <-watchers
		gone := apierrors.NewResourceExpired("too old resource version").Status()
		first.Error(&gone)
		<-watchers // listed and watching again
		time.Sleep(time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Watch = %v, want context.Canceled", err)
		}
		var verbs []string
		for _, a := range cs.Actions() {
			gvr := a.GetResource()
			if a.GetNamespace() != "shop" || gvr.Group != discoveryv1.GroupName || gvr.Resource != "endpointslices" {
				t.Errorf("a request outside the Role's reach: %s %v in %q", a.GetVerb(), gvr, a.GetNamespace())
			}
			verbs = append(verbs, a.GetVerb())
		}
		slices.Sort(verbs)
		rules = []rbacv1.PolicyRule{{APIGroups: []string{discoveryv1.GroupName}, Resources: []string{"endpointslices"}, Verbs: slices.Compact(verbs)}}
	})
	return rules
}

// The Role grants exactly what the informer asks for, no verb more, no
// verb less (least privilege: a Role with "get" grants reading any slice
// of the namespace by name, which Watch never does); and the Role shown
// in docs/deploy-kubernetes.md and in the package doc of discovery/kubernetes is the
// manifest's.
func TestRoleIsExactlyWhatTheInformerUses(t *testing.T) {
	used := informerRules(t)
	m := load(t)
	if !reflect.DeepEqual(m.role.Rules, used) {
		t.Errorf("Role rules %+v, but the informer makes exactly %+v", m.role.Rules, used)
	}

	guide, err := os.ReadFile("../../docs/deploy-kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../discovery/kubernetes/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var docYAML bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if y, ok := strings.CutPrefix(l, "//\t"); ok {
			docYAML.WriteString(y + "\n")
		}
	}
	for where, text := range map[string]string{"docs/deploy-kubernetes.md": string(guide), "discovery/kubernetes/doc.go": docYAML.String()} {
		var found bool
		for _, block := range roleBlocks(text) {
			obj, err := decodeStrict([]byte(block))
			if err != nil {
				t.Errorf("%s: the Role does not decode: %v\n%s", where, err, block)
				continue
			}
			found = true
			if r := obj.(*rbacv1.Role); !reflect.DeepEqual(r.Rules, m.role.Rules) || r.Name != m.role.Name {
				t.Errorf("%s shows Role %q with rules %+v; the manifest has %q with %+v", where, r.Name, r.Rules, m.role.Name, m.role.Rules)
			}
		}
		if !found {
			t.Errorf("%s shows no Role", where)
		}
	}
}

// roleBlocks returns the YAML blocks of text that start with the
// apiVersion of RBAC and hold a Role: from that line to the next line
// that is not indented or a key of the document.
func roleBlocks(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l != "apiVersion: rbac.authorization.k8s.io/v1" {
			continue
		}
		var b strings.Builder
		for _, l := range lines[i:] {
			if l == "" || strings.HasPrefix(l, "```") || strings.HasPrefix(l, "---") {
				break
			}
			b.WriteString(l + "\n")
		}
		if strings.Contains(b.String(), "\nkind: Role\n") {
			out = append(out, b.String())
		}
	}
	return out
}
