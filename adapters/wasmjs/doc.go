// Package wasmjs serves the GeeCache peer protocol from a JavaScript host:
// a Go program compiled with GOOS=js GOARCH=wasm hands the host a function
// (Func), and the host's own HTTP server calls it for every protocol
// request. Any host that runs Go's js/wasm works the same way: node.js's
// http module, Deno.serve, a Cloudflare Workers fetch handler, a Service
// Worker's fetch event.
//
// Go's net/http cannot listen under GOOS=js (its listeners are an
// in-process fake), so the host listens and this package answers. The
// answer comes from the node's nethttp.Pool, with the checks and the
// protocol code its ServeHTTP uses elsewhere, so a node served this way
// speaks the same protocol as one served by package nethttp, and the two
// can be peers in one cluster. To call its peers, such a node uses package
// nethttp, which under GOOS=js sends with the host's fetch(). Neither
// links net/http there (it would be a third of the node's size).
//
// The function is
//
//	serve(method, path, headers[, signal[, body]]) → answer, or Promise<answer>
//	serve(batch, signals[, bodies]) → [answer, or Promise<answer>, ...]
//	answer = {status, headers, body}
//
// In the first form, method is the HTTP method; path is the request path
// as it was sent (still percent-encoded, without the query string),
// relative to where the node is mounted, so it starts with "/_geecache/";
// headers is node's IncomingMessage.rawHeaders (names and values in
// turn), or that array joined with "\n" (the cheapest to pass), or an
// object of header names to strings or arrays of strings (node's
// IncomingMessage.headers), or a Headers object (Fetch API); signal is an
// optional AbortSignal that abandons the load when the caller goes away;
// body is the body of a PUT (a peer's Group.Set) or a POST (a peer's
// batch: GetMany, RemoveMany, Purge), a Uint8Array, which the
// host reads (bounded: the node refuses a value over its size limit).
//
// The second form answers many requests in one call: a call between
// JavaScript and Go costs more than answering a request from memory, so
// a host under load gathers the requests of one turn of its event loop
// (examples/wasm/shim.js does) and makes one call for them. batch is the
// requests separated by NUL ("\x00"), each its method, path and headers
// (names and values in turn) on lines of their own; signals[i] and
// bodies[i] are request i's signal and body, if any. It returns an array
// of their answers, in order.
//
// An answer holds the status code, an object of response headers
// (Content-Length included) and the body, to be sent as they are: a
// string when the body is valid UTF-8 (every host sends a string body as
// UTF-8, so as the same bytes), else a Uint8Array. A request answered from
// memory is answered within the call, and its answer comes as it is; a
// request that has to wait (a load, a peer's fetch) comes as a Promise of
// its answer. Both can be awaited. A Promise rejects only when the
// arguments are malformed (a TypeError) or when answering the request
// panicked (an Error saying "serve panicked"): a Getter's panic is not
// one, it is the protocol's error answer (cache.ErrGetterPanic).
//
// Every request is answered by a goroutine, so a load that waits on
// JavaScript (a peer fetch, a timer) cannot deadlock the host's event
// loop.
//
// The package builds only for GOOS=js.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/deploy-wasm.md
package wasmjs
