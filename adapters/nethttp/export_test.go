//go:build !js

package nethttp

import (
	"net"
	"net/http"
	"testing"
)

// For the tests of package nethttp_test.
var (
	MustClient = mustClient
	RawGet     = rawGet
	RawAnswer  = rawAnswer
	Hang       = hang
	NoLeaks    = noLeaks
)

// StartFakePeer is startFakePeer, returning the fake peer's URL.
func StartFakePeer(t *testing.T, answer func(*http.Request, net.Conn) bool) string {
	t.Helper()
	return startFakePeer(t, answer).addr
}

// The test peers' requests, for the tests of package nethttp_test.
var (
	PeerGet    = peerGet
	PeerPeek   = peerPeek
	PeerBatch  = peerBatch
	PeerSet    = peerSet
	PeerRemove = peerRemove
	PeerOffer  = peerOffer
	LocalPeer  = newLocalPeer
)
