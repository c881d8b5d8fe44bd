package cache

import (
	"bytes"
	"io"
)

// A ByteView is an immutable view of a cached value. The cache shares one
// copy of a value among all its readers, so every accessor that hands out
// bytes copies them: no caller can change what others read.
// The zero value is an empty view.
type ByteView struct {
	b []byte
}

// Len returns the length of the value in bytes.
func (v ByteView) Len() int { return len(v.b) }

// ByteSlice returns a copy of the value.
func (v ByteView) ByteSlice() []byte { return bytes.Clone(v.b) }

// String returns the value as a string (a copy).
func (v ByteView) String() string { return string(v.b) }

// At returns the byte at index i. It panics if i is out of range, like an
// index expression.
func (v ByteView) At(i int) byte { return v.b[i] }

// Equal reports whether the value equals b.
func (v ByteView) Equal(b []byte) bool { return bytes.Equal(v.b, b) }

// ReadAt implements io.ReaderAt on the value.
func (v ByteView) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if off >= int64(len(v.b)) {
		return 0, io.EOF
	}
	n := copy(p, v.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteTo implements io.WriterTo, writing the value to w without an
// intermediate copy.
func (v ByteView) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(v.b)
	if err == nil && n != len(v.b) {
		err = io.ErrShortWrite
	}
	return int64(n), err
}
