//go:build !js && !wasip1

package mux

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"time"
)

// The reader of a multiplexed connection, on the asking side: it reads
// the answer and interim frames and hands each to its call.

// read reads the answers and hands each to its call, until the connection
// fails; then it fails every call in flight. br is the small reader the
// upgrade's answer was read with: the connection's own read buffer is
// allocated once the first frame begins, and reads through it.
func (mc *muxConn) read(br *bufio.Reader) {
	_, err := br.Peek(1)
	if err == nil {
		br = bufio.NewReaderSize(br, muxBufSize)
	}
	for err == nil {
		err = mc.readFrame(br)
	}
	mc.fail(err)
}

// readFrame reads one frame and delivers it.
func (mc *muxConn) readFrame(br *bufio.Reader) error {
	// Waiting for a frame to begin has no bound (the connection may be
	// idle); once one has begun, all of it, its header included, must
	// arrive within the timeout, which bounds every request: a peer that
	// stops in the middle of one holds every answer behind it.
	if _, err := br.Peek(1); err != nil {
		return err
	}
	armed := false
	arm := func() {
		if !armed {
			armed = true
			_ = mc.c.SetReadDeadline(time.Now().Add(mc.t.timeout))
		}
	}
	defer func() {
		if armed {
			_ = mc.c.SetReadDeadline(time.Time{})
		}
	}()
	if br.Buffered() < FrameHeader {
		arm()
	}
	n, kind, id, err := ReadHeader(br)
	switch {
	case err != nil:
		return err
	case kind == KindGoAway:
		return mc.readGoAway(br, n)
	case kind != KindAnswer && kind != KindInterim:
		return fmt.Errorf("%w: kind %d from the server", ErrFrame, kind)
	case n > mc.t.maxFrame || (kind == KindInterim && n > 4+muxMaxHead):
		return fmt.Errorf("%w: a frame of %d bytes", ErrFrame, n)
	}
	if int64(br.Buffered()) < n {
		arm()
	}
	if kind == KindInterim {
		return mc.readInterim(br, n, id)
	}
	head, bodyLen, buf, err := muxReadHead(br, n, mc.ibuf)
	mc.ibuf = buf
	if err != nil {
		return err
	}
	body, err := ReadPayload(br, bodyLen) // the value's own buffer
	if err != nil {
		return err
	}
	status := head.Uint16()
	h := head.Fields()
	if head.Err != nil {
		return head.Err
	}
	if status < 200 || status > 999 {
		return fmt.Errorf("%w: status %d", ErrFrame, status)
	}
	mc.mu.Lock()
	call := mc.calls[id]
	delete(mc.calls, id)
	closeNow := mc.closing && len(mc.calls) == 0
	mc.mu.Unlock()
	if call != nil { // else its caller has gone
		call.res <- muxResult{resp: &http.Response{
			Status: fmt.Sprint(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, ContentLength: int64(len(body)), Body: &muxBody{b: body}, Request: call.req,
		}}
	}
	if closeNow {
		return ErrLost
	}
	return nil
}

// A request may get muxMaxInterims 1xx answers, and one more for each
// muxInterimEvery it has waited (an owner repeats its 102 every 100 ms
// while it loads); a peer that sends more floods the connection, which
// ends. 1xx answers of calls no longer in flight are allowed as many per
// call sent.
const (
	muxMaxInterims  = 5
	muxInterimEvery = 50 * time.Millisecond
)

// readInterim reads an interim frame of n bytes (at most a head) into a
// buffer the reader reuses, and passes the first one of a call on as its
// 1xx (its fields are not read: no caller uses them).
func (mc *muxConn) readInterim(br *bufio.Reader, n int64, id uint32) error {
	if int64(cap(mc.ibuf)) < n {
		mc.ibuf = make([]byte, n)
	}
	p := mc.ibuf[:n]
	if _, err := io.ReadFull(br, p); err != nil {
		return err
	}
	if n < 6 || int64(binary.BigEndian.Uint32(p)) != n-4 {
		return fmt.Errorf("%w: an interim answer with a body", ErrFrame)
	}
	status := int(binary.BigEndian.Uint16(p[4:]))
	if status < 100 || status > 199 || status == http.StatusSwitchingProtocols {
		return fmt.Errorf("%w: interim status %d", ErrFrame, status)
	}
	now := time.Now()
	mc.mu.Lock()
	call := mc.calls[id]
	flood := false
	if call != nil {
		call.interims++
		flood = call.interims > muxMaxInterims+int(now.Sub(call.start)/muxInterimEvery)
	} else {
		if mc.strayInterims == 0 {
			mc.strayStart = now
		}
		mc.strayInterims++ // for a caller that has gone
		allowed := int64(muxMaxInterims) + int64(now.Sub(mc.strayStart)/muxInterimEvery)
		flood = mc.strayInterims > allowed*(int64(mc.nextID)+1)
	}
	mc.mu.Unlock()
	if flood {
		return fmt.Errorf("%w: too many 1xx answers", ErrFrame)
	}
	if call != nil { // each sign of life: the asking group waits while they come
		if tr := httptrace.ContextClientTrace(call.req.Context()); tr != nil && tr.Got1xxResponse != nil {
			_ = tr.Got1xxResponse(status, nil)
		}
	}
	return nil
}

// readGoAway reads a go-away frame of n bytes: the peer takes no request
// after the id it names, and answers those up to it. The calls after it
// are handed back to be sent elsewhere (errMuxRetry), new requests go to
// a new connection, and this one closes once its last call has its
// answer. A peer that sends a second go-away, or names an id not sent,
// breaks the format: the connection ends.
func (mc *muxConn) readGoAway(br *bufio.Reader, n int64) error {
	if n != 4 {
		return fmt.Errorf("%w: a go-away of %d bytes", ErrFrame, n)
	}
	if br.Buffered() < 4 {
		_ = mc.c.SetReadDeadline(time.Now().Add(mc.t.timeout)) // as any frame that has begun
		defer func() { _ = mc.c.SetReadDeadline(time.Time{}) }()
	}
	var p [4]byte
	if _, err := io.ReadFull(br, p[:]); err != nil {
		return err
	}
	last := binary.BigEndian.Uint32(p[:])
	mc.mu.Lock()
	if mc.away || last > mc.nextID {
		mc.mu.Unlock()
		return fmt.Errorf("%w: a go-away after one, or for request %d not sent", ErrFrame, last)
	}
	mc.away, mc.closing = true, true
	var retry []*muxCall
	for id, call := range mc.calls {
		if id > last {
			retry = append(retry, call)
			delete(mc.calls, id)
		}
	}
	idle := len(mc.calls) == 0
	mc.mu.Unlock()
	mc.t.forget(mc)
	for _, call := range retry {
		call.res <- muxResult{err: errMuxRetry}
	}
	if idle {
		return ErrLost // nothing left to wait for: close
	}
	return nil
}
