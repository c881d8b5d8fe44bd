package cache

import (
	"bytes"
	"io"

	"github.com/geecache/geecache/internal/valuesum"
)

// A ByteView is an immutable view of a cached value. The cache shares one
// copy of a value among all its readers, so a ByteView never hands its
// bytes to code that could change them: the accessors that return bytes
// return copies, and the ones that stream them (WriteTo, Reader) pass them
// only to io.Writer.Write or a read-only reader, whose contracts forbid
// changing or keeping them. Slicing and comparing never copy.
// The zero value is an empty view.
type ByteView struct {
	b   []byte
	sum uint64 // b's xxhash64 as the cache keeps it (see getLocal), or 0: not known
}

// ByteViewOf returns a view of b itself, not of a copy: the caller must not
// change b afterwards. A transport makes a peer's answer one with it
// (PeerReply.Answer) without copying the value again.
func ByteViewOf(b []byte) ByteView { return ByteView{b: b} }

// Len returns the length of the value in bytes.
func (v ByteView) Len() int { return len(v.b) }

// ByteSlice returns a copy of the value.
func (v ByteView) ByteSlice() []byte { return bytes.Clone(v.b) }

// String returns the value as a string (a copy).
func (v ByteView) String() string { return string(v.b) }

// Slice returns the view of the bytes from index from up to (not
// including) to, without copying; v.Slice(from, v.Len()) is the rest. It
// panics if the indexes are out of range, like a slice expression.
func (v ByteView) Slice(from, to int) ByteView { return ByteView{b: v.b[from:to]} }

// Copy copies the value into dst, as the built-in copy does, and returns
// the number of bytes copied.
func (v ByteView) Copy(dst []byte) int { return copy(dst, v.b) }

// Equal reports whether v and w hold the same bytes.
func (v ByteView) Equal(w ByteView) bool { return bytes.Equal(v.b, w.b) }

// EqualBytes reports whether the value equals b.
func (v ByteView) EqualBytes(b []byte) bool { return bytes.Equal(v.b, b) }

// EqualString reports whether the value equals s, without converting
// either.
func (v ByteView) EqualString(s string) bool {
	return len(v.b) == len(s) && (len(s) == 0 || string(v.b) == s)
}

// Reader returns an io.ReadSeeker (also an io.ReaderAt and io.WriterTo)
// over the value, without copying it: v.Reader().(io.ReaderAt) reads at an
// offset.
func (v ByteView) Reader() io.ReadSeeker { return bytes.NewReader(v.b) }

// WriteTo implements io.WriterTo. It hands the cached bytes to one call of
// w.Write without a copy, which is what makes serving a large value cheap;
// io.Writer's contract forbids w to modify or keep them.
//
// A protocol server's hasher (a valuesum.Sink) is given the sum the cache
// keeps for the value instead, if it keeps one: a value that never changes
// is hashed once, when it entered the cache, not at every serve.
func (v ByteView) WriteTo(w io.Writer) (int64, error) {
	if v.sum != 0 {
		if s, ok := w.(valuesum.Sink); ok {
			s.Known(v.sum)
			return int64(len(v.b)), nil
		}
	}
	n, err := w.Write(v.b)
	if err == nil && n != len(v.b) {
		err = io.ErrShortWrite
	}
	return int64(n), err
}
