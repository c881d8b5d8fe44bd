package cache

import (
	"errors"
	"strings"
)

// ErrIntegrity is wrapped by the error a binding returns for a peer's
// answer that fails the integrity checks of the peer protocol (a value
// without its checksum or with a wrong one, or, with a Secret, an answer
// without a valid signature: adapters/PROTOCOL.md). Such an answer is never
// returned as a value or as "not found"; the Group loads the key itself.
// It is here, in the core, because every binding reports it alike and a
// user tests for it with errors.Is (a forged or corrupted answer is worth
// an alert).
var ErrIntegrity = errors.New("integrity check failed")

// A PeerError is an error answer from a peer, as every binding reports
// it: errors.As finds it in the error of a Get whose owner answered with
// an error, so that a caller can tell a peer that refused the request's
// signature (Status 401) from one whose source failed (500), and read what
// the peer said. errors.Is matches it to Err: getter.ErrNotFound for a
// missing key, so that "not found" holds across the hop.
type PeerError struct {
	Status  int    // the answer's status (an HTTP status code, in every binding)
	Code    string // the protocol's error code (adapters/PROTOCOL.md), or ""
	Message string // the peer's message, trimmed
	Err     error  // what the answer means, for errors.Is (Unwrap returns it)
}

// Error returns the peer's message, after Err's text unless the message
// already says it (as a missing key's "kkk not exist: key not found"
// does).
func (e *PeerError) Error() string {
	if e.Err == nil {
		return e.Message
	}
	s := e.Err.Error()
	if strings.Contains(e.Message, s) {
		return e.Message
	}
	return s + ": " + e.Message
}

// Unwrap returns Err.
func (e *PeerError) Unwrap() error { return e.Err }
