package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// manifests is what deploy/ holds, decoded.
type manifests struct {
	sa          *corev1.ServiceAccount
	svc         *corev1.Service
	dns, slices *appsv1.Deployment // geecache.yaml's and endpointslices.yaml's
	pdb         *policyv1.PodDisruptionBudget
	role        *rbacv1.Role
	binding     *rbacv1.RoleBinding
}

// decodeStrict decodes one YAML document into the API type of its kind,
// rejecting unknown and duplicate fields (a misspelt field would
// otherwise be dropped by the API server without a word).
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 ServiceAccount":
		obj = new(corev1.ServiceAccount)
	case "v1 Service":
		obj = new(corev1.Service)
	case "apps/v1 Deployment":
		obj = new(appsv1.Deployment)
	case "policy/v1 PodDisruptionBudget":
		obj = new(policyv1.PodDisruptionBudget)
	case "rbac.authorization.k8s.io/v1 Role":
		obj = new(rbacv1.Role)
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		obj = new(rbacv1.RoleBinding)
	default:
		return nil, fmt.Errorf("unexpected kind %q %q", tm.APIVersion, tm.Kind)
	}
	// As the API server decodes: case-sensitive field names (Go's
	// encoding/json would take "clusterIp" for clusterIP), no unknown or
	// duplicate field.
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	strict, err := kjson.UnmarshalStrict(j, obj, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err == nil {
		err = errors.Join(strict...)
	}
	return obj, err
}

func load(t *testing.T) manifests {
	t.Helper()
	var m manifests
	for _, file := range []string{"geecache.yaml", "endpointslices.yaml"} {
		data, err := os.ReadFile(filepath.Join("deploy", file))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			obj, err := decodeStrict(doc)
			if err != nil {
				t.Fatalf("%s, document %d: %v", file, i, err)
			}
			switch o := obj.(type) {
			case *corev1.ServiceAccount:
				m.sa = o
			case *corev1.Service:
				m.svc = o
			case *appsv1.Deployment:
				if file == "geecache.yaml" {
					m.dns = o
				} else {
					m.slices = o
				}
			case *policyv1.PodDisruptionBudget:
				m.pdb = o
			case *rbacv1.Role:
				m.role = o
			case *rbacv1.RoleBinding:
				m.binding = o
			}
		}
	}
	if m.sa == nil || m.svc == nil || m.dns == nil || m.slices == nil || m.pdb == nil || m.role == nil || m.binding == nil {
		t.Fatalf("a manifest is missing: %+v", m)
	}
	return m
}

// The decoder the test relies on rejects what the API server would drop.
func TestDecodeStrictRejectsUnknownFields(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIp: None}\n",                // case
		"apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {clusterIP: None, clusterIP: ''}\n", // duplicate
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 3}\n",             // unknown
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	} {
		if _, err := decodeStrict([]byte(doc)); err == nil {
			t.Errorf("accepted:\n%s", doc)
		}
	}
}

// envOf gives the container's environment as the kubelet would, with
// values for the downward API and the Secret.
func envOf(c corev1.Container) func(string) string {
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env[e.Name] = "10.244.1.5"
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = "shop"
		case e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "from-the-secret"
		}
	}
	return func(k string) string { return env[k] }
}

// The manifests agree with each other and with the program: labels and
// selectors, the named port, the probes' paths (which the program's
// handler answers), the flags and environment (which the program
// accepts), the grace period (which covers the drain), the Role (exactly
// what the informer needs) and its binding.
func TestManifestsAgree(t *testing.T) {
	m := load(t)
	labels := m.dns.Spec.Template.Labels
	if !reflect.DeepEqual(m.dns.Spec.Selector.MatchLabels, labels) || !reflect.DeepEqual(m.svc.Spec.Selector, labels) ||
		!reflect.DeepEqual(m.pdb.Spec.Selector.MatchLabels, labels) {
		t.Errorf("selectors differ: deployment %v, template %v, service %v, pdb %v",
			m.dns.Spec.Selector.MatchLabels, labels, m.svc.Spec.Selector, m.pdb.Spec.Selector.MatchLabels)
	}
	if m.svc.Spec.ClusterIP != corev1.ClusterIPNone || m.svc.Spec.PublishNotReadyAddresses {
		t.Errorf("the Service must be headless and publish ready pods only: %+v", m.svc.Spec)
	}
	if *m.dns.Spec.Replicas != 3 || m.pdb.Spec.MaxUnavailable == nil || m.pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("want 3 replicas and a PDB of maxUnavailable 1: %d, %v", *m.dns.Spec.Replicas, m.pdb.Spec.MaxUnavailable)
	}
	ru := m.dns.Spec.Strategy.RollingUpdate
	if ru == nil || ru.MaxUnavailable.IntValue() != 0 || ru.MaxSurge.IntValue() != 1 {
		t.Errorf("the rollout must surge one pod and keep every other: %+v", ru)
	}

	// Both Deployments are one, but for the discovery and the token.
	want := m.dns.DeepCopy()
	want.Spec.Template.Spec.AutomountServiceAccountToken = ptr(true)
	for i, e := range want.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "GEECACHE_DISCOVERY" {
			want.Spec.Template.Spec.Containers[0].Env[i].Value = discoveryEndpointSlices
		}
	}
	if !reflect.DeepEqual(want, m.slices) {
		t.Errorf("endpointslices.yaml's Deployment differs from geecache.yaml's in more than the discovery and the token")
	}

	for _, d := range []*appsv1.Deployment{m.dns, m.slices} {
		spec := d.Spec.Template.Spec
		if len(spec.Containers) != 1 {
			t.Fatalf("want one container, got %d", len(spec.Containers))
		}
		c := spec.Containers[0]
		cfg, err := parseFlags(c.Args, envOf(c), io.Discard)
		if err != nil {
			t.Fatalf("the program refuses the container's args and env: %v", err)
		}
		if len(c.Ports) != 1 || c.Ports[0].Name != peerPortName || cfg.listen != fmt.Sprintf(":%d", c.Ports[0].ContainerPort) {
			t.Errorf("container port %+v, program listens on %q", c.Ports, cfg.listen)
		}
		sp := m.svc.Spec.Ports
		if len(sp) != 1 || sp[0].Name != peerPortName || sp[0].Port != c.Ports[0].ContainerPort || sp[0].TargetPort.String() != peerPortName {
			t.Errorf("Service ports %+v: want %q, port %d, targetPort by name", sp, peerPortName, c.Ports[0].ContainerPort)
		}
		if cfg.self != "http://10.244.1.5:8080" || cfg.service != m.svc.Name || cfg.namespace != "shop" {
			t.Errorf("self %q, service %q (Service %q), namespace %q", cfg.self, cfg.service, m.svc.Name, cfg.namespace)
		}
		grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
		if cfg.drain <= 0 || grace <= cfg.drain+shutdownTimeout {
			t.Errorf("terminationGracePeriodSeconds %v does not cover the drain %v plus the shutdown %v", grace, cfg.drain, shutdownTimeout)
		}
		if spec.ServiceAccountName != m.sa.Name {
			t.Errorf("serviceAccountName %q, ServiceAccount %q", spec.ServiceAccountName, m.sa.Name)
		}
		tokens := spec.AutomountServiceAccountToken != nil && *spec.AutomountServiceAccountToken
		if tokens != (cfg.discovery == discoveryEndpointSlices) {
			t.Errorf("discovery %s with the token mounted: %v", cfg.discovery, tokens)
		}
		for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Port.String() != peerPortName {
				t.Fatalf("want HTTP probes on port %q: %+v", peerPortName, p)
			}
			if code := probe(t, p.HTTPGet.Path, false); code != http.StatusOK {
				t.Errorf("probe %s answers %d", p.HTTPGet.Path, code)
			}
		}
		if code := probe(t, c.ReadinessProbe.HTTPGet.Path, true); code != http.StatusServiceUnavailable {
			t.Errorf("readiness probe %s answers %d while draining, want 503", c.ReadinessProbe.HTTPGet.Path, code)
		}
	}
	if m.dns.Spec.Template.Spec.Containers[0].Env[0].Value != discoveryDNS {
		t.Errorf("geecache.yaml must use DNS discovery by default")
	}

	// The Role: list and watch EndpointSlices, nothing more (and nothing
	// less: TestRoleIsExactlyWhatTheInformerUses).
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}}}
	if !reflect.DeepEqual(m.role.Rules, wantRules) {
		t.Errorf("Role rules %+v, want %+v", m.role.Rules, wantRules)
	}
	b := m.binding
	if b.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: m.role.Name}) ||
		!slices.Equal(b.Subjects, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: m.sa.Name}}) {
		t.Errorf("RoleBinding %+v does not bind Role %q to ServiceAccount %q", b, m.role.Name, m.sa.Name)
	}
	if m.sa.AutomountServiceAccountToken == nil || *m.sa.AutomountServiceAccountToken {
		t.Errorf("the ServiceAccount must not mount its token by default")
	}
}

// probe asks the program's handler for path.
func probe(t *testing.T, path string, draining bool) int {
	t.Helper()
	reg := cache.NewRegistry()
	pool, err := nethttp.NewPool("http://10.244.1.5:8080", reg, &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := reg.NewGroup(groupName, 1<<20, getter.Func(func(context.Context, string) ([]byte, error) { return nil, getter.ErrNotFound }), &cache.GroupOptions{Peers: pool})
	if err != nil {
		t.Fatal(err)
	}
	var d atomic.Bool
	d.Store(draining)
	rec := httptest.NewRecorder()
	handler(pool, g, &d, slog.New(slog.DiscardHandler)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code == http.StatusOK && !strings.HasSuffix(rec.Body.String(), "\n") {
		t.Errorf("probe %s: body %q", path, rec.Body.String())
	}
	return rec.Code
}

func ptr[T any](v T) *T { return &v }
