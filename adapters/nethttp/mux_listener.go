//go:build !js && !wasip1

package nethttp

// The multiplexed connections in a Server's listener: its shutdown stops
// them, and its connection cap counts them and closes an idle one.

// A muxTrack is the part of a limitListener that knows the multiplexed
// connections taken over from it, guarded by its mu.
type muxTrack struct {
	mux map[*serverConn]func() // their stop
}

// trackMux records c, a multiplexed connection taken over from l, so that
// closing l (the Server's Shutdown or Close) stops it; untrack forgets it.
func (l *limitListener) trackMux(c *serverConn, stop func()) (untrack func()) {
	l.mu.Lock()
	if l.mux == nil {
		l.mux = map[*serverConn]func(){}
	}
	l.mux[c] = stop
	l.mu.Unlock()
	select {
	case <-l.done:
		stop()
	default:
	}
	return func() {
		l.mu.Lock()
		delete(l.mux, c)
		l.mu.Unlock()
	}
}

// muxIdle records that c, a multiplexed connection, is idle (no request in
// flight) or busy, as trackConnState does for HTTP: an idle one is closed
// at once if a new connection waits for its slot, and may be closed later
// to make room for one.
func (l *limitListener) muxIdle(c *serverConn, idle bool) {
	l.mu.Lock()
	if _, open := l.conns[c]; !open {
		l.mu.Unlock()
		return
	}
	since, closeIt := uint64(0), false
	if idle {
		l.seq++
		since, closeIt = l.seq, l.waiting
	}
	l.conns[c] = since
	l.mu.Unlock()
	if closeIt {
		_ = c.Close()
	}
}

// stopMux stops every multiplexed connection taken over from l.
func (l *limitListener) stopMux() {
	l.mu.Lock()
	stops := make([]func(), 0, len(l.mux))
	for _, stop := range l.mux {
		stops = append(stops, stop)
	}
	l.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}
