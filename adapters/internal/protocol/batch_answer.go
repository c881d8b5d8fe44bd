package protocol

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// The client's reading of a batch answer: its body, then its entries.

// decodeEntries reads a batch answer's entries.
func decodeEntries(b []byte, keys []string, each func(int, []byte, time.Duration, error)) error {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return fmt.Errorf("%w: bad entry count", ErrBadResponse)
	}
	b = b[k:]
	for i := range int(n) {
		if len(b) < 1 {
			return fmt.Errorf("%w: truncated batch answer", ErrBadResponse)
		}
		st := b[0]
		b = b[1:]
		key, rest, ok1 := field(b)
		ttlMs, k := binary.Uvarint(rest)
		if !ok1 || k <= 0 {
			return fmt.Errorf("%w: truncated batch answer", ErrBadResponse)
		}
		payload, rest, ok2 := field(rest[k:])
		if !ok2 || len(rest) < 8 {
			return fmt.Errorf("%w: truncated batch answer", ErrBadResponse)
		}
		sum := binary.BigEndian.Uint64(rest)
		b = rest[8:]
		ttl := time.Duration(0)
		if ttlMs > 0 && ttlMs < uint64(time.Duration(1<<62)/time.Millisecond) {
			ttl = time.Duration(ttlMs) * time.Millisecond
		}
		switch {
		case i < len(keys) && string(key) != keys[i]:
			each(i, nil, 0, fmt.Errorf("%w: entry %d names another key", ErrBadResponse, i))
		case xxhash.Sum64(payload) != sum:
			each(i, nil, 0, fmt.Errorf("%w: entry %d does not match its checksum", ErrIntegrity, i))
		case st == entryValue:
			each(i, append([]byte(nil), payload...), ttl, nil) // its own copy: the cache keeps it
		case st == entryNotFound:
			each(i, nil, ttl, NewPeerError(statusNotFound, CodeNotFound, text(payload, statusNotFound)))
		case st == entryLoadErr:
			each(i, nil, 0, NewPeerError(statusInternalServerError, CodeLoadError, text(payload, statusInternalServerError)))
		case st == entryAlone:
			each(i, nil, 0, errAlone)
		case st == entryNotHeld:
			each(i, nil, 0, NewPeerError(statusNotFound, CodeNotHeld, text(payload, statusNotFound)))
		default:
			each(i, nil, 0, fmt.Errorf("%w: entry %d has unknown status %d", ErrBadResponse, i, st))
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: bytes after the last entry", ErrBadResponse)
	}
	return nil
}

// field reads a uvarint-length-prefixed field.
func field(b []byte) (f, rest []byte, ok bool) {
	l, k := binary.Uvarint(b)
	if k <= 0 || l > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(l)], b[k+int(l):], true
}

// text is a message from a peer, as readError makes one.
func text(msg []byte, status int) string {
	t := strings.TrimSpace(strings.ToValidUTF8(string(msg), "\uFFFD"))
	if t == "" {
		t = statusText(status)
	}
	return t
}
