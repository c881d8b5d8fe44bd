// Package protocol is the GeeCache peer wire protocol, independent of any
// transport: how a request path is built and parsed, how requests are signed
// and verified, how a node answers a request (Server), and how the answer is
// turned back into the same Go errors on the calling node (Client).
//
// A binding (package nethttp for net/http, or an AWS Lambda handler) only
// moves a Request and a Response over its transport; everything that two
// nodes must agree on lives here, so that every binding speaks the same
// protocol. The package is internal: it is for the bindings under
// adapters/, and an application uses a binding. What an application acts
// on is in package cache: cache.ErrConfig (wrapped by NewServer's and
// NewClient's errors), ErrIntegrity (wrapped by this package's) and
// PeerError (NewPeerError). The full specification, written for implementers in other
// languages, is adapters/PROTOCOL.md. In short:
//
//	GET {base}/_geecache/{group}/{key}
//
// with group and key each escaped by Escape (url.PathEscape, with the dot
// segments "." and ".." written "!." and "!..", which no URL parser
// resolves; Path ends a dot key with "/"). The answer is 200 with
// the raw value bytes, or an error status with a plain-text message and an
// X-Geecache-Error code (see the Code constants). A request from a peer
// carries the X-Geecache-Peer header; the node serving it never forwards it
// again, so a request takes at most one hop even when two nodes disagree on
// who owns a key.
//
// This is version 2 of the protocol. Every response carries the xxhash64
// of its body (X-Geecache-Checksum), and a Client never returns a value
// that lacks it or fails it (ErrIntegrity). With a shared secret, requests
// are signed with HMAC-SHA256 over the method, the target node's base URL,
// the escaped path, the peer header and a timestamp, and every response is
// signed over the request's signature, its status, code and checksum, so
// that neither a forged value nor a forged "not found" is accepted. A
// Client reads a value as it arrives, never allocating for what a peer
// only announces.
package protocol
