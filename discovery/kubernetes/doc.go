// Package kubernetes keeps a GeeCache peer set (a picker.Peers, which
// nethttp.Pool and lambda.Peers embed) in step with the EndpointSlices of
// a Kubernetes Service: [Watch] runs an informer on the slices labelled
// kubernetes.io/service-name=SERVICE in one namespace and sets the peers
// to the endpoints that are ready and not terminating.
//
// It is a module of its own (github.com/geecache/geecache/discovery/kubernetes)
// so that client-go never enters the dependencies of the main module. A
// cluster that does not want an informer, or any permission, can use DNS
// discovery of a headless Service instead (package discovery/dns of the
// main module); this package reacts faster: a pod that starts terminating
// leaves every node's ring within [Options.Debounce] of the API server's
// event, where DNS waits for its next poll (every 5 s by default).
//
// What goes on the ring:
//
//   - Every endpoint of every slice of the Service (a Service of more than
//     100 endpoints, or with endpoints that resolve the port differently,
//     has several slices; they are merged), whose conditions.ready is not
//     false and whose conditions.terminating is not true. A pod that is
//     not ready yet is not added; a pod that is being deleted during a
//     rollout (terminating, perhaps still serving) is removed at once,
//     before it stops: its in-flight requests finish, and no new request
//     is sent to it.
//   - One address family: [Options.AddressType], by default the family of
//     the peer set's own address (a dual-stack Service has an IPv4 and an
//     IPv6 slice for the same pods; using both would put every pod on the
//     ring twice).
//   - The port named [Options.Port] in each slice (by default the slice's
//     only port).
//
// Changes are gathered for [Options.Debounce] and given to Set at once, so
// a rollout that changes the slices ten times in a second rebuilds the ring
// once or twice, not ten times. A list with no endpoint at all (the Service
// deleted, every pod unready at once, a slice controller that lags) is not
// applied: the last good list stays, the refusal is logged at warning level
// and counted in [Stats] (Kept). A cache that forgets its peers would load
// every key from the source on every node.
//
// # The Role it needs
//
// The pod's ServiceAccount must be allowed to list and watch
// EndpointSlices in the Service's namespace, and nothing else (the
// informer never gets a slice by name):
//
//	apiVersion: rbac.authorization.k8s.io/v1
//	kind: Role
//	metadata:
//	  name: geecache-endpointslices
//	rules:
//	  - apiGroups: ["discovery.k8s.io"]
//	    resources: ["endpointslices"]
//	    verbs: ["list", "watch"]
//
// bound to the ServiceAccount by a RoleBinding (examples/kubernetes has
// both). Without it the informer's list fails with Forbidden; Watch logs
// that at warning level with this hint and keeps retrying (with client-go's
// backoff), and the node keeps the peers it has.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/deploy-kubernetes.md
package kubernetes
