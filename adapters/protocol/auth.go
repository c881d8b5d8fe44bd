package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// Header names of the protocol. Header lookups are case-insensitive; these
// are the canonical forms.
const (
	// HeaderPeer marks a request sent by another node. The node serving it
	// answers from its own memory or source and never forwards it again.
	HeaderPeer = "X-Geecache-Peer"
	// HeaderTimestamp carries the signing time of a request, in Unix
	// seconds (decimal).
	HeaderTimestamp = "X-Geecache-Timestamp"
	// HeaderSignature carries the request's HMAC-SHA256, lower-case hex.
	HeaderSignature = "X-Geecache-Signature"
	// HeaderError carries the Code of an error response.
	HeaderError = "X-Geecache-Error"
)

// Reasons a signed request is rejected; the Server answers each with 401.
var (
	errNoSignature  = errors.New("missing signature headers")
	errBadTimestamp = errors.New("malformed timestamp")
	errStale        = errors.New("stale timestamp")
	errBadSignature = errors.New("wrong signature")
)

// mac returns the HMAC-SHA256 of the request's canonical string:
// "GEECACHE1\n" + method + "\n" + escapedPath + "\n" + timestamp.
func mac(secret []byte, method, escapedPath, timestamp string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("GEECACHE1\n"))
	m.Write([]byte(method))
	m.Write([]byte{'\n'})
	m.Write([]byte(escapedPath))
	m.Write([]byte{'\n'})
	m.Write([]byte(timestamp))
	return m.Sum(nil)
}

// sign adds the timestamp and signature headers to h.
func sign(h http.Header, secret []byte, now time.Time, method, escapedPath string) {
	ts := strconv.FormatInt(now.Unix(), 10)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, hex.EncodeToString(mac(secret, method, escapedPath, ts)))
}

// verify checks the signature headers of a request against secret, and that
// its timestamp is within maxSkew of now.
func verify(h http.Header, secret []byte, now time.Time, maxSkew time.Duration, method, escapedPath string) error {
	ts, sig := h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if ts == "" || sig == "" {
		return errNoSignature
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errBadTimestamp
	}
	skew := now.Sub(time.Unix(sec, 0))
	if skew > maxSkew || skew < -maxSkew {
		return errStale // the offset is not told: it would help an attacker
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return errBadSignature
	}
	if !hmac.Equal(got, mac(secret, method, escapedPath, ts)) {
		return errBadSignature
	}
	return nil
}
