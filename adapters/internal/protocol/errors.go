package protocol

import (
	"errors"
	"fmt"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Code names the kind of an error response. It travels in the
// X-Geecache-Error header, so that a client can tell two 404s apart (a
// missing key, which is final, from an unknown group, which is a
// configuration error the caller may recover from by loading locally).
type Code string

// The error codes of the protocol, with the status each is sent with.
const (
	CodeNotFound         Code = "not_found"          // 404: the source has no such key
	CodeUnknownGroup     Code = "unknown_group"      // 404: the node has no such group
	CodeBadRequest       Code = "bad_request"        // 400: malformed path
	CodeUnauthorized     Code = "unauthorized"       // 401: missing, wrong or stale signature
	CodeMethodNotAllowed Code = "method_not_allowed" // 405: not a GET
	CodeTooLarge         Code = "too_large"          // 413: value over the size limit
	CodeLoadError        Code = "load_error"         // 500: the node failed to load the value
	CodeNotHeld          Code = "not_held"           // 404: a memory-only request for a key the node does not hold
)

// Errors a Client returns for error responses, inside a *cache.PeerError
// (NewPeerError) that carries the peer's message. A 404 with CodeNotFound matches
// getter.ErrNotFound instead, so that errors.Is(err, getter.ErrNotFound)
// holds across the hop. Like every GeeCache sentinel, their texts have no
// "geecache:" prefix: the error a user finally sees has exactly one.
var (
	// ErrUnknownGroup: the peer has no group of that name.
	ErrUnknownGroup = errors.New("peer has no such group")
	// ErrBadRequest: the peer could not parse the request path.
	ErrBadRequest = errors.New("peer rejected malformed request")
	// ErrUnauthorized: the peer rejected the request's signature; the
	// nodes' secrets or clocks disagree.
	ErrUnauthorized = errors.New("peer rejected signature")
	// ErrMethodNotAllowed: the peer accepts only GET.
	ErrMethodNotAllowed = errors.New("method not allowed")
	// ErrTooLarge: the value is larger than the size limit, as reported
	// by the peer or found by the client while reading.
	ErrTooLarge = errors.New("value too large")
	// ErrLoad: the peer failed to load the value (its source failed).
	ErrLoad = errors.New("peer failed to load value")
	// ErrBadResponse: the answer does not follow the protocol (an
	// unexpected status, a 404 without an error code, a broken body).
	// The peer is probably not a GeeCache node or the base path is wrong.
	ErrBadResponse = errors.New("unexpected response")
	// ErrIntegrity: the answer fails the checks of protocol version 2: a
	// 200 without a checksum, a body that does not match its checksum,
	// or, with a secret, a response without a valid signature. It wraps
	// ErrBadResponse, so the calling node loads the key itself, and
	// cache.ErrIntegrity, the name users test for; such an answer is
	// never returned as a value or as "not found".
	ErrIntegrity = fmt.Errorf("%w: %w", ErrBadResponse, cache.ErrIntegrity)
)

// NewPeerError returns the error of an error response from a peer: a
// *cache.PeerError that errors.Is matches to the sentinel of its status
// and code (see Client.ReadResponse). A binding reporting a failure of its
// own transport as a peer's answer (a Lambda throttle, say) uses it too.
func NewPeerError(status int, code Code, message string) *cache.PeerError {
	return &cache.PeerError{Status: status, Code: string(code), Message: message, Err: errorFor(status, code)}
}

// Status returns the HTTP status an error response with code c is sent
// with (500 for an unknown code).
func (c Code) Status() int {
	switch c {
	case CodeNotFound, CodeUnknownGroup, CodeNotHeld:
		return statusNotFound
	case CodeBadRequest:
		return statusBadRequest
	case CodeUnauthorized:
		return statusUnauthorized
	case CodeMethodNotAllowed:
		return statusMethodNotAllowed
	case CodeTooLarge:
		return statusRequestEntityTooLarge
	default:
		return statusInternalServerError
	}
}

// errorFor maps an error response back to the sentinel the Client returns.
func errorFor(status int, code Code) error {
	switch status {
	case statusNotFound:
		switch code {
		case CodeNotFound:
			return getter.ErrNotFound
		case CodeUnknownGroup:
			return ErrUnknownGroup
		case CodeNotHeld:
			return cache.ErrNotHeld
		}
		return ErrBadResponse
	case statusBadRequest:
		return ErrBadRequest
	case statusUnauthorized:
		return ErrUnauthorized
	case statusMethodNotAllowed:
		return ErrMethodNotAllowed
	case statusRequestEntityTooLarge:
		return ErrTooLarge
	case statusInternalServerError:
		return ErrLoad
	}
	return ErrBadResponse
}
