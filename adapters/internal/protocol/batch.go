package protocol

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/geecache/geecache/cache"
)

// The batch requests of protocol version 2 (see PROTOCOL.md, "Batches"):
// a POST of Prefix + Escape(group) + "/!get" (or "!remove", "!purge")
// whose body lists the keys, signed as a PUT is (its checksum covers the
// keys). A node of the previous version answers 405, which a Client turns
// into an error wrapping errors.ErrUnsupported, so that the group asks key
// by key.

// A BatchOp is what a batch asks of its keys.
type BatchOp string

// The batch operations.
const (
	BatchGet    BatchOp = "get"    // the values of the keys
	BatchRemove BatchOp = "remove" // drop the keys
	BatchPurge  BatchOp = "purge"  // drop every key of the group (no keys)
	// BatchOffer names keys the receiver may take over from their previous
	// owner (an offer, PROTOCOL.md): names only, never values.
	BatchOffer BatchOp = "offer"
)

// Limits of a batch request: a Client splits a longer list (see
// SplitBatch), and a Server refuses one over them (400, or 413 for the
// body).
const (
	MaxBatchKeys  = 1000
	MaxBatchBytes = 1 << 20 // of a request's body
	// MaxBatchKey is the longest key a batch carries; a longer one is
	// asked alone.
	MaxBatchKey = 64 << 10
)

// BatchContentType is the Content-Type of a batch's body, both ways.
const BatchContentType = "application/x-geecache-batch"

// The status of one key in a batch's answer.
const (
	entryValue    byte = 0 // the payload is the value
	entryNotFound byte = 1 // the payload is the owner's message
	entryLoadErr  byte = 2 // the payload is the owner's message
	entryAlone    byte = 3 // over the answer's byte budget: ask for it alone
	entryNotHeld  byte = 4 // a memory-only batch: the node does not hold the key
)

// errAlone is a key's error when the owner could not fit it in the answer.
var errAlone = fmt.Errorf("the value did not fit in the batch's answer: %w", errors.ErrUnsupported)

// BatchPath returns the path of a batch of op in group.
func BatchPath(group string, op BatchOp) string {
	return Prefix + Escape(group) + "/!" + string(op)
}

// batchOp returns the op of a batch path, or "" if path is not one.
func batchOp(path string) (group string, op BatchOp, ok bool) {
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return "", "", false
	}
	eg, eop, ok := strings.Cut(rest, "/!")
	if !ok || eg == "" || strings.Contains(eg, "/") {
		return "", "", false
	}
	switch op := BatchOp(eop); op {
	case BatchGet, BatchRemove, BatchPurge, BatchOffer:
		g, err := unescape(eg)
		return g, op, err == nil
	}
	return "", "", false
}

// SplitBatch calls fn with the bounds of consecutive runs of keys that
// each fit in one batch request (MaxBatchKeys, MaxBatchBytes); a key
// longer than MaxBatchKey is a run of its own, which a binding asks alone.
func SplitBatch(keys []string, fn func(lo, hi int)) {
	lo, bytes := 0, 0
	for i, k := range keys {
		n := len(k) + binary.MaxVarintLen64
		if i > lo && (i-lo >= MaxBatchKeys || bytes+n > MaxBatchBytes || len(k) > MaxBatchKey) {
			fn(lo, i)
			lo, bytes = i, 0
		}
		bytes += n
		if len(k) > MaxBatchKey {
			fn(i, i+1)
			lo, bytes = i+1, 0
		}
	}
	if lo < len(keys) {
		fn(lo, len(keys))
	}
}

// TooLongForBatch reports whether key is over MaxBatchKey.
func TooLongForBatch(key string) bool { return len(key) > MaxBatchKey }

// encodeKeys returns the body of a batch request: a uvarint count, then
// each key as a uvarint length and its bytes.
func encodeKeys(keys []string) []byte {
	n := binary.MaxVarintLen64
	for _, k := range keys {
		n += len(k) + binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	return b
}

// decodeKeys reads a batch request's body. With shared, the keys are
// substrings of one string of the body (one allocation, not one per key):
// for a caller that keeps none of them past the request, or copies the
// ones it keeps (Group.GetMany does, for a peer's batch).
func decodeKeys(b []byte, shared bool) ([]string, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > MaxBatchKeys {
		return nil, fmt.Errorf("bad key count (at most %d)", MaxBatchKeys)
	}
	var all string
	if shared {
		all = string(b)
	}
	at := k
	b = b[k:]
	keys := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return nil, errors.New("truncated key")
		}
		if shared {
			keys = append(keys, all[at+k:at+k+int(l)])
		} else {
			keys = append(keys, string(b[k:k+int(l)]))
		}
		b = b[k+int(l):]
		at += k + int(l)
	}
	if len(b) != 0 {
		return nil, errors.New("bytes after the last key")
	}
	return keys, nil
}

// NewBatchRequest returns the request of op for keys of group to the node
// at target: a POST of BatchPath with the keys as its body, a peer
// request, with its checksum and, with a secret, signed over both. keys
// must fit (see SplitBatch); a purge has none. A BatchGet with peek is a
// memory-only batch (HeaderPeer PeerMemoryOnly).
func (c *Client) NewBatchRequest(ctx context.Context, target, group string, op BatchOp, keys []string, peek bool) Request {
	path := BatchPath(group, op)
	body := encodeKeys(keys)
	peer := c.peer
	if op == BatchGet && peek {
		peer = peerMemory
	}
	h := Header{HeaderPeer: peer, HeaderChecksum: {checksum(c.cfg.Secret, body)}, "Content-Type": {BatchContentType}}
	return c.request(ctx, methodPost, target, path, h, body)
}

// entryFraming is the most an entry of a batch answer adds to its key and
// payload: status, three varints and the checksum.
const entryFraming = 1 + 3*binary.MaxVarintLen64 + 8

// batchLimit is the largest answer a Client reads to a batch: the size
// limit, which a server keeps the whole answer within.
func (c *Client) batchLimit() int64 { return c.cfg.MaxValueBytes }

// ReadBatchResponse reads the answer to the batch req of keys. On a 200 to
// a BatchGet it calls each for every entry, with its index: the value and
// its lifetime, or the key's error (getter.ErrNotFound, a load error, an
// error wrapping errors.ErrUnsupported for a key to ask alone). An entry
// that names another key than the one at its index, or whose checksum does
// not match, is that key's error (ErrBadResponse, ErrIntegrity); an entry
// past the keys asked is passed on with its index, for the caller to
// refuse. The answer as a whole is checked as any answer is (checksum,
// signature), read up to the size limit (ErrTooLarge past it); an error answer is its error, and a 405 (a node
// of the previous version) one wrapping errors.ErrUnsupported as well.
func (c *Client) ReadBatchResponse(ctx context.Context, req Request, status int, header Header, size int64, body io.Reader,
	keys []string, each func(i int, value []byte, ttl time.Duration, err error)) error {
	if err := c.checkHeader(req, status, header); err != nil {
		return err
	}
	if status != statusOK {
		err := c.readError(req, status, header, body)
		if errors.Is(err, ErrMethodNotAllowed) {
			return fmt.Errorf("%w (a node of the previous protocol version: %w)", errors.ErrUnsupported, err)
		}
		return err
	}
	limit := c.batchLimit()
	if size > limit {
		return fmt.Errorf("%w: peer announced a %d-byte batch answer, the limit is %d", ErrTooLarge, size, limit)
	}
	// Read as a value is (readValue, within the same limit): what the
	// peer announces costs nothing until it arrives, and a body shorter or
	// longer than announced, or over the limit, is refused.
	b, err := c.readValue(ctx, size, body)
	if err != nil {
		return fmt.Errorf("reading a batch answer: %w", err)
	}
	if err := checkBody(c.cfg.Secret, header, b); err != nil {
		return err
	}
	if each == nil {
		return nil
	}
	return decodeEntries(b, keys, each)
}

// appendEntry appends one entry of a batch answer.
func appendEntry(b []byte, st byte, key string, ttl time.Duration, payload []byte) []byte {
	b = append(appendEntryHead(b, st, key, ttl, len(payload)), payload...)
	return binary.BigEndian.AppendUint64(b, xxhash.Sum64(payload))
}

// appendViewEntry appends the entry of a value held in the cache.
func appendViewEntry(b []byte, key string, ttl time.Duration, v cache.ByteView) []byte {
	b = appendEntryHead(b, entryValue, key, ttl, v.Len())
	at := len(b)
	b = append(b, make([]byte, v.Len())...) // no allocation: append grows b alone
	v.Copy(b[at:])
	return binary.BigEndian.AppendUint64(b, xxhash.Sum64(b[at:]))
}

// appendEntryHead appends what comes before an entry's payload of n
// bytes: its status, key, lifetime and length.
func appendEntryHead(b []byte, st byte, key string, ttl time.Duration, n int) []byte {
	b = append(b, st)
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	var ms uint64
	if ttl > 0 {
		ms = uint64(max(ttl.Milliseconds(), 1))
	}
	b = binary.AppendUvarint(b, ms)
	return binary.AppendUvarint(b, uint64(n))
}

// ReadOnlyBatch reports whether path is that of a batch that only reads
// at the serving node (a !get or an !offer): a transport may send it again
// on a new connection when the one it used turns out closed.
func ReadOnlyBatch(path string) bool {
	_, op, ok := batchOp(path)
	return ok && (op == BatchGet || op == BatchOffer)
}
