package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// A bare framed binary protocol, the second multiplexed transport the
// study compares (see mux_test.go): one TCP connection per peer, many
// requests in flight on it, no HTTP. It is the floor of such a transport in this process, not a
// design: no signature, limit, timeout or error answer; a checksum only
// where asked (the GeeCache cluster over it: the xxhash64 of every value,
// computed by the server on every answer and checked by the client, as
// protocol version 2 does over HTTP).
//
//	request:  id uint32, key length uint16, key
//	response: id uint32, value length uint32, xxhash64 uint64 (or 0), value
//
// The server reads requests on one goroutine per connection, answers each
// on a goroutine of its own (a real node's load may be slow, so requests
// cannot be answered in turn) and writes the answers from one writer
// goroutine, which flushes when no answer is waiting. The client writes a
// request under a lock and the last writer waiting flushes; one reader
// goroutine hands each answer to its caller by id.

// framedServer serves the framed protocol on a loopback listener.
type framedServer struct {
	ln    *countingListener
	value func(key string) framedValue
	sum   bool          // send each value's xxhash64
	pc    *protoCounter // counts requests (never HTTP/2) and callers
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// framedValue is an answer the server writes without copying it: a
// cache.ByteView, or rawValue.
type framedValue interface {
	Len() int
	WriteTo(w io.Writer) (int64, error)
}

// rawValue is a []byte as a framedValue.
type rawValue []byte

func (v rawValue) Len() int                           { return len(v) }
func (v rawValue) WriteTo(w io.Writer) (int64, error) { n, err := w.Write(v); return int64(n), err }

func newFramedServer(tb testing.TB, value func(key string) framedValue, sum bool) *framedServer {
	s := &framedServer{ln: listenLoopback(tb), value: value, sum: sum, pc: &protoCounter{}, conns: map[net.Conn]bool{}}
	s.wg.Go(func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Go(func() { s.serve(c) })
		}
	})
	tb.Cleanup(func() {
		_ = s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

type framedAnswer struct {
	id  uint32
	v   framedValue
	sum uint64
}

func (s *framedServer) serve(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	out := make(chan framedAnswer, 256)
	done := make(chan struct{})
	var handlers sync.WaitGroup
	var writer sync.WaitGroup
	writer.Go(func() {
		bw := bufio.NewWriterSize(c, 64<<10)
		var hdr [16]byte
		for a := range out {
			binary.BigEndian.PutUint32(hdr[:4], a.id)
			binary.BigEndian.PutUint32(hdr[4:], uint32(a.v.Len()))
			binary.BigEndian.PutUint64(hdr[8:], a.sum)
			_, _ = bw.Write(hdr[:])
			_, _ = a.v.WriteTo(bw)
			if len(out) == 0 {
				if bw.Flush() != nil {
					close(done) // the handlers stop sending
					for range out {
					}
					return
				}
			}
		}
	})
	br := bufio.NewReaderSize(c, 64<<10)
	addr := c.RemoteAddr().String()
	var hdr [6]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			break
		}
		key := make([]byte, binary.BigEndian.Uint16(hdr[4:]))
		if _, err := io.ReadFull(br, key); err != nil {
			break
		}
		id := binary.BigEndian.Uint32(hdr[:4])
		s.pc.asked(addr, string(key))
		handlers.Go(func() {
			select {
			case out <- s.answer(id, string(key)):
			case <-done:
			}
		})
	}
	handlers.Wait()
	close(out)
	writer.Wait()
}

// answer is the answer to request id for key.
func (s *framedServer) answer(id uint32, key string) framedAnswer {
	a := framedAnswer{id: id, v: s.value(key)}
	if s.sum {
		d := xxhash.New()
		_, _ = a.v.WriteTo(d)
		a.sum = d.Sum64()
	}
	return a
}

// framedClient keeps one connection to a framedServer.
type framedClient struct {
	conn    net.Conn
	sum     bool         // check each value's xxhash64
	waiting atomic.Int32 // writers waiting for wmu
	wmu     sync.Mutex
	bw      *bufio.Writer
	nextID  uint32 // under wmu
	pmu     sync.Mutex
	pending map[uint32]chan framedResult
	err     error // under pmu: why the reader stopped
	done    chan struct{}
}

type framedResult struct {
	v   []byte
	err error
}

func dialFramed(addr string, sum bool) (*framedClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	fc := &framedClient{conn: c, sum: sum, bw: bufio.NewWriterSize(c, 64<<10), pending: map[uint32]chan framedResult{}, done: make(chan struct{})}
	go fc.read()
	return fc, nil
}

func (fc *framedClient) read() {
	defer close(fc.done)
	br := bufio.NewReaderSize(fc.conn, 64<<10)
	var hdr [16]byte
	var err error
	for {
		if _, err = io.ReadFull(br, hdr[:]); err != nil {
			break
		}
		v := make([]byte, binary.BigEndian.Uint32(hdr[4:]))
		if _, err = io.ReadFull(br, v); err != nil {
			break
		}
		id := binary.BigEndian.Uint32(hdr[:4])
		r := framedResult{v: v}
		if fc.sum && xxhash.Sum64(v) != binary.BigEndian.Uint64(hdr[8:]) {
			r = framedResult{err: errors.New("framed: checksum mismatch")}
		}
		fc.pmu.Lock()
		ch := fc.pending[id]
		delete(fc.pending, id)
		fc.pmu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	fc.pmu.Lock()
	fc.err = fmt.Errorf("framed: connection lost: %w", err)
	for id, ch := range fc.pending {
		ch <- framedResult{err: fc.err}
		delete(fc.pending, id)
	}
	fc.pmu.Unlock()
}

// get asks for key and waits for its answer or ctx.
func (fc *framedClient) get(ctx context.Context, key string) ([]byte, error) {
	if len(key) > 0xffff {
		return nil, errors.New("framed: key too long")
	}
	ch := make(chan framedResult, 1)
	fc.waiting.Add(1)
	fc.wmu.Lock()
	fc.waiting.Add(-1)
	fc.nextID++
	id := fc.nextID
	fc.pmu.Lock()
	if fc.err != nil {
		fc.pmu.Unlock()
		fc.wmu.Unlock()
		return nil, fc.err
	}
	fc.pending[id] = ch
	fc.pmu.Unlock()
	var hdr [6]byte
	binary.BigEndian.PutUint32(hdr[:4], id)
	binary.BigEndian.PutUint16(hdr[4:], uint16(len(key)))
	_, _ = fc.bw.Write(hdr[:])
	_, _ = fc.bw.WriteString(key)
	var err error
	if fc.waiting.Load() == 0 { // the last writer in line flushes for all
		err = fc.bw.Flush()
	}
	fc.wmu.Unlock()
	if err != nil {
		_ = fc.conn.Close() // the reader fails every pending request
	}
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		fc.pmu.Lock()
		delete(fc.pending, id)
		fc.pmu.Unlock()
		return nil, ctx.Err()
	}
}

func (fc *framedClient) close() {
	_ = fc.conn.Close()
	<-fc.done
}

// newFramedTarget is a framed server and one client connection to it.
func newFramedTarget(tb testing.TB, value func(key string) []byte) *muxTarget {
	s := newFramedServer(tb, func(key string) framedValue { return rawValue(value(key)) }, false)
	fc, err := dialFramed(s.ln.Addr().String(), false)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(fc.close)
	return &muxTarget{
		httpTarget: &httpTarget{
			get: func(ctx context.Context, key string) (int, error) {
				v, err := fc.get(ctx, key)
				return len(v), err
			},
			remote:     func(string) bool { return true },
			accepts:    s.ln.accepts.Load,
			peerErrors: func() int64 { return 0 },
			closeIdle:  func() {}, // one connection, kept for the target's life
			warmOwners: func(context.Context, []string) error { return nil },
		},
		framed:   true,
		counters: []*protoCounter{s.pc},
	}
}
