// Package wasmjs serves the GeeCache peer protocol from a JavaScript host:
// a Go program compiled with GOOS=js GOARCH=wasm hands the host a function
// (Func), and the host's own HTTP server calls it for every protocol
// request. Any host that runs Go's js/wasm works the same way: node.js's
// http module, Deno.serve, a Cloudflare Workers fetch handler, a Service
// Worker's fetch event.
//
// Go's net/http cannot listen under GOOS=js (its listeners are an
// in-process fake), so the host listens and this package answers. The
// answer comes from the node's nethttp.Pool, so a node served this way
// speaks the same protocol as one served by package nethttp, and the two
// can be peers in one cluster. To call its peers, such a node uses package
// nethttp, whose transport under GOOS=js is the host's fetch().
//
// The function is
//
//	serve(method, path, headers[, signal]) → Promise<{status, headers, body}>
//
// method is the HTTP method; path is the request path as it was sent
// (still percent-encoded, without the query string), relative to where
// the node is mounted, so it starts with "/_geecache/"; headers is an
// object of header names to strings or arrays of strings (node's
// IncomingMessage.headers) or a Headers object (Fetch API); signal is an
// optional AbortSignal that abandons the load when the caller goes away.
// The Promise resolves to the status code, an object of response headers
// (Content-Length included) and the body as a Uint8Array, to be sent as
// they are. It rejects only when the arguments are malformed.
//
// The function returns at once and the request is answered by a goroutine,
// so a load that waits on JavaScript (a peer fetch, a timer) cannot
// deadlock the host's event loop.
//
// The package builds only for GOOS=js.
package wasmjs
