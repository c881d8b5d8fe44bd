package cache

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// This file is the snapshot of a group's memory, for a node restarted in
// place (the same address, the same ring): it writes what it holds as
// the keys' owner when it stops, and reads it back when it starts, so that
// it comes back warm instead of loading every key it held again. The
// format (all integers varints, as encoding/binary writes them):
//
//	"GCSNAP\x00\x01"                        magic and version
//	uvarint len, name                       the group's name
//	records, the most used first:
//	  'v' uvarint len, key, uvarint len, value, varint expiry, uvarint uses, crc
//	  'n' uvarint len, key, varint expiry, uvarint uses, crc    (a cached "not found")
//	'e' uvarint records, crc                                    the end
//
// expiry is in Unix nanoseconds (0: never), uses what the frequency sketch
// and the entry's own count said of the key, and crc the CRC-32C
// (Castagnoli) of the record's bytes before it, from its kind byte on.

const snapshotMagic = "GCSNAP\x00\x01"

// Record kinds.
const (
	snapValue    = 'v'
	snapNotFound = 'n'
	snapEnd      = 'e'
)

// snapMaxUses caps the uses a record carries: the sketch's counters hold
// no more (4 bits).
const snapMaxUses = 15

// snapMaxName bounds the group name a snapshot's header may carry (more,
// if the group's own name is longer).
const snapMaxName = 4 << 10

// snapSum adds b to sum, a record's CRC-32C. (MakeTable returns the one
// table the package keeps for Castagnoli's polynomial, made once.)
func snapSum(sum uint32, b []byte) uint32 {
	return crc32.Update(sum, crc32.MakeTable(crc32.Castagnoli), b)
}

// Snapshot writes to w the values this node holds as their owner (its
// main cache; copies of other nodes' keys are not its to keep), each with
// its expiry and how used it was, the most used first, and returns how
// many it wrote. Restore reads it back into a group of the same name.
//
// Take it after the node has stopped serving (its server shut down), as
// the last step before the process exits: a Remove or Set that reached
// the node after its snapshot would be lost with it. What the node misses
// while it is down (a Purge, or a Remove whose retries end before it is
// back) it does not see either; see UpdateError. Write it to a temporary
// file and rename it, so that a crash does not leave half a snapshot, in
// a directory only the node can write: a snapshot is trusted as the
// node's memory is. Snapshot holds no lock while it writes; it stops when
// ctx ends.
func (g *Group) Snapshot(ctx context.Context, w io.Writer) (int, error) {
	fail := func(n int, err error) (int, error) {
		return n, fmt.Errorf("geecache: snapshot of group %q: %w", g.name, err)
	}
	keys, uses := g.mem.main.KeysUses(math.MaxInt)
	bw := bufio.NewWriter(w)
	rec := binary.AppendUvarint([]byte(snapshotMagic), uint64(len(g.name)))
	if _, err := bw.Write(append(rec, g.name...)); err != nil {
		return fail(0, err)
	}
	now, n := g.fresh.nanos(), 0
	for i, key := range keys {
		if i%256 == 0 && ctx.Err() != nil {
			return fail(n, context.Cause(ctx))
		}
		v, exp, ok := g.mem.main.Peek(key)
		if !ok || (exp != 0 && exp <= now) {
			continue // evicted or expired since the ranking
		}
		notFound := g.fresh.isNotFound(v)
		rec = append(rec[:0], snapValue)
		if notFound {
			rec[0] = snapNotFound
		}
		rec = binary.AppendUvarint(rec, uint64(len(key)))
		rec = append(rec, key...)
		if !notFound {
			rec = binary.AppendUvarint(rec, uint64(len(v)))
			rec = append(rec, v...)
		}
		rec = binary.AppendVarint(rec, exp)
		rec = binary.AppendUvarint(rec, min(uses[i], snapMaxUses))
		rec = binary.LittleEndian.AppendUint32(rec, snapSum(0, rec))
		if _, err := bw.Write(rec); err != nil {
			return fail(n, err)
		}
		n++
	}
	rec = binary.AppendUvarint(append(rec[:0], snapEnd), uint64(n))
	rec = binary.LittleEndian.AppendUint32(rec, snapSum(0, rec))
	if _, err := bw.Write(rec); err != nil {
		return fail(n, err)
	}
	if err := bw.Flush(); err != nil {
		return fail(n, err)
	}
	return n, nil
}

// Restore reads into this group's memory a snapshot that Snapshot wrote
// of a group of the same name, the most used first, and returns how many
// values it kept. It keeps a value only if:
//   - this node owns its key by its peers now (set them first);
//   - it is still fresh; its expiry is brought within the group's TTL (or
//     NotFoundTTL, for a cached "not found") where one is set; a cached
//     "not found" is kept only by a group with a NotFoundTTL;
//   - the group does not hold its key, and had neither it nor a key that
//     shares its stripe (1/256 of the keys) removed, set or purged since
//     the group was made: the snapshot cannot know of such a change;
//   - it fits in the budget beside what the group holds: Restore evicts
//     nothing.
//
// Each record is checked against its checksum before it is kept. Restore
// may run while the group serves.
//
// A damaged, truncated or foreign snapshot ends Restore with an error
// saying where; what it kept before that stays, as each record is checked
// on its own. Any error means the same to a caller: the node starts with
// what it has, and loads the rest as it is asked. Restore stops when ctx
// ends.
func (g *Group) Restore(ctx context.Context, r io.Reader) (int, error) {
	rd := snapReader{r: bufio.NewReader(r), max: max(g.mem.maxBytes, 0)}
	fail := func(n int, err error) (int, error) {
		return n, fmt.Errorf("geecache: restore of group %q, record %d: %w", g.name, rd.records, err)
	}
	if err := rd.header(g.name); err != nil {
		return fail(0, err)
	}
	n := 0
	for {
		if rd.records%256 == 0 && ctx.Err() != nil {
			return fail(n, context.Cause(ctx))
		}
		rec, err := rd.next()
		if err != nil {
			return fail(n, err)
		}
		if rec.end {
			return n, nil
		}
		if !rec.tooBig && g.restoreOne(rec) {
			n++
		}
	}
}

// restoreOne keeps one record of a snapshot, if it may (see Restore).
func (g *Group) restoreOne(rec snapRecord) bool {
	if g.peers != nil {
		if _, remote := g.pickPeer(rec.key); remote {
			return false
		}
	}
	now := g.fresh.nanos()
	exp, ttl, v := rec.expires, g.fresh.ttl, rec.value
	if rec.notFound {
		if g.fresh.notFoundTTL <= 0 {
			return false // this group caches no "not found" (NotFoundTTL)
		}
		ttl, v = g.fresh.notFoundTTL, g.fresh.negative
	}
	if ttl > 0 && (exp == 0 || exp-now > int64(ttl)) {
		exp = now + int64(ttl)
	}
	if exp != 0 && exp <= now {
		return false
	}
	if !g.mem.addIfRoom(rec.key, v, exp) {
		return false
	}
	g.fresh.expiring(exp)
	g.mem.main.Credit(rec.key, uint32(rec.uses))
	return true
}

// errSnapshot is what every damage of a snapshot wraps, so that the
// messages read alike; no caller needs to tell it from an I/O error.
var errSnapshot = errors.New("not a snapshot, or a damaged one")

// A snapRecord is one entry read from a snapshot, or its end.
type snapRecord struct {
	end, notFound bool
	tooBig        bool // larger than the budget: read, checked, not kept
	key           string
	value         []byte
	expires       int64
	uses          uint64
}

// snapReader reads a snapshot's records, counting each byte it reads in
// the current record's checksum. It allocates no more for a record than
// the budget of the group it restores into (max): a larger one is read
// through and left out, so that a length that lies costs no memory, only
// reading on.
type snapReader struct {
	r       *bufio.Reader
	max     int64
	sum     uint32 // the CRC of the current record's bytes so far
	one     [1]byte
	records int
}

// ReadByte and Read read from r, counting what they read in sum; they
// make a snapReader an io.ByteReader and an io.Reader for encoding/binary
// and io.
func (s *snapReader) ReadByte() (byte, error) {
	c, err := s.r.ReadByte()
	if err == nil {
		s.one[0] = c
		s.sum = snapSum(s.sum, s.one[:])
	}
	return c, err
}

func (s *snapReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b)
	s.sum = snapSum(s.sum, b[:n])
	return n, err
}

func (s *snapReader) header(name string) error {
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(s, magic); err != nil || string(magic) != snapshotMagic {
		return fmt.Errorf("%w: it does not start as one", errSnapshot)
	}
	n, err := s.uvarint()
	if err != nil {
		return err
	}
	got, err := s.field(n, max(len(name), snapMaxName))
	if err != nil {
		return err
	}
	if got == nil {
		return fmt.Errorf("%w: it is of another group (a name of %d bytes)", errSnapshot, n)
	}
	if string(got) != name {
		return fmt.Errorf("%w: it is of group %q", errSnapshot, got)
	}
	return nil
}

func (s *snapReader) next() (rec snapRecord, err error) {
	s.sum = 0
	kind, err := s.ReadByte()
	if err != nil {
		return rec, s.damaged(err)
	}
	switch kind {
	case snapEnd:
		count, err := s.uvarint()
		if err != nil {
			return rec, err
		}
		if err := s.checksum(); err != nil {
			return rec, err
		}
		if count != uint64(s.records) {
			return rec, fmt.Errorf("%w: it ends after %d records, not %d", errSnapshot, s.records, count)
		}
		return snapRecord{end: true}, nil
	case snapValue, snapNotFound:
	default:
		return rec, fmt.Errorf("%w: unknown record kind %q", errSnapshot, kind)
	}
	rec.notFound = kind == snapNotFound
	keyLen, err := s.uvarint()
	if err != nil {
		return rec, err
	}
	key, err := s.field(keyLen, int(min(s.max, math.MaxInt32)))
	if err != nil {
		return rec, err
	}
	rec.key, rec.tooBig = string(key), key == nil && keyLen > 0
	if !rec.notFound {
		valueLen, err := s.uvarint()
		if err != nil {
			return rec, err
		}
		room := 0
		if !rec.tooBig {
			room = int(min(s.max-int64(len(key)), math.MaxInt32))
		}
		if rec.value, err = s.field(valueLen, room); err != nil {
			return rec, err
		}
		rec.tooBig = rec.tooBig || (rec.value == nil && valueLen > 0)
	}
	if rec.expires, err = binary.ReadVarint(s); err != nil {
		return rec, s.damaged(err)
	}
	if rec.uses, err = s.uvarint(); err != nil {
		return rec, err
	}
	if err := s.checksum(); err != nil {
		return rec, err
	}
	s.records++
	return rec, nil
}

func (s *snapReader) uvarint() (uint64, error) {
	v, err := binary.ReadUvarint(s)
	return v, s.damaged(err)
}

// field reads n bytes into memory of its own if n is at most room, else
// reads them through and returns nil. It reads in pieces, so that a
// length that lies costs no more memory than the bytes that are there.
func (s *snapReader) field(n uint64, room int) ([]byte, error) {
	if n > uint64(room) {
		_, err := io.CopyN(io.Discard, s, int64(min(n, math.MaxInt64)))
		return nil, s.damaged(err)
	}
	out := make([]byte, 0, min(n, 64<<10))
	for uint64(len(out)) < n {
		at := len(out)
		out = append(out, make([]byte, min(n-uint64(at), 64<<10))...)
		if _, err := io.ReadFull(s, out[at:]); err != nil {
			return nil, s.damaged(err)
		}
	}
	return out, nil
}

// checksum reads the record's CRC and compares it with its bytes'.
func (s *snapReader) checksum() error {
	var c [4]byte
	if _, err := io.ReadFull(s.r, c[:]); err != nil {
		return s.damaged(err)
	}
	if binary.LittleEndian.Uint32(c[:]) != s.sum {
		return fmt.Errorf("%w: a record's checksum does not match", errSnapshot)
	}
	return nil
}

// damaged turns a read's error, if any, into the snapshot's: an end of
// input in the middle is a truncated snapshot; any other error is the
// reader's (or a varint too long, which encoding/binary reports the same
// way).
func (s *snapReader) damaged(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: it ends in the middle (truncated)", errSnapshot)
	}
	return fmt.Errorf("reading it: %w", err)
}
