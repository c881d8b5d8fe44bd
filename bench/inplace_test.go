package bench

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The roll of nodes restarted in place as systemd restarts a service on a
// fixed host (bench/README.md, "Restarted in place, from a
// snapshot"): each node stays in every peer list, and its listening
// socket stays open across the restart, as socket activation keeps it,
// so that a peer's connection waits in the backlog while no process
// accepts instead of being refused. The node stops serving
// (Server.Shutdown), writes its memory (Group.Snapshot), and a new process
// at the same address sets its peers, reads it back (Group.Restore) and
// serves. With cold, it starts empty instead: what the snapshot saves;
// without a kept socket (refused), the port is closed between the two
// processes, so that the peers' connections are refused meanwhile and
// they eject the node: a restart without socket activation.

// A keptSocket is a listening socket that outlives the servers that
// accept from it: each gets a view, which stops accepting when the server
// closes it; connections that come meanwhile wait for the next view.
type keptSocket struct {
	ln    net.Listener
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func keepSocket(ln net.Listener) *keptSocket {
	s := &keptSocket{ln: ln, conns: make(chan net.Conn), done: make(chan struct{})}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case s.conns <- conn:
			case <-s.done:
				_ = conn.Close()
				return
			}
		}
	}()
	return s
}

// view returns a listener for one server.
func (s *keptSocket) view() net.Listener {
	return &socketView{s: s, closed: make(chan struct{})}
}

func (s *keptSocket) close() {
	s.once.Do(func() {
		close(s.done)
		_ = s.ln.Close()
	})
}

type socketView struct {
	s      *keptSocket
	closed chan struct{}
	once   sync.Once
}

func (v *socketView) Accept() (net.Conn, error) {
	select {
	case <-v.closed:
		return nil, net.ErrClosed
	default:
	}
	select {
	case conn := <-v.s.conns:
		return conn, nil
	case <-v.closed:
		return nil, net.ErrClosed
	case <-v.s.done:
		return nil, net.ErrClosed
	}
}

func (v *socketView) Close() error {
	v.once.Do(func() { close(v.closed) })
	return nil
}

func (v *socketView) Addr() net.Addr { return v.s.ln.Addr() }

// snapshotter is the pair of Group methods the warm restart uses; a tree
// without them (the baseline) restarts cold.
type snapshotter interface {
	Snapshot(ctx context.Context, w io.Writer) (int, error)
	Restore(ctx context.Context, r io.Reader) (int, error)
}

// inPlace counts what the restarts of a roll in place did.
type inPlace struct {
	restarts, restored atomic.Int64
	gap                atomic.Int64 // ns without a server, summed
}

// rollInPlace is the roll in place, from a snapshot unless cold, its
// socket kept unless refused; its control is roll{kept: !refused}, which
// restarts nothing.
func rollInPlace(cold, refused bool, st *inPlace) roll {
	return roll{kept: !refused, step: func(c *mbCluster, n *mbNode) {
		c.publish(n) // its own clients wait for it, as behind a health check
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		began := time.Now()
		_ = n.srv.Shutdown(ctx) // what it serves is answered; then nothing reaches it
		<-n.done
		var snap bytes.Buffer
		s, warm := any(n.group).(snapshotter)
		if warm && !cold {
			if _, err := s.Snapshot(ctx, &snap); err != nil {
				c.tb.Errorf("snapshot %s: %v", n.addr, err)
			}
		}
		_ = n.pool.Close()
		c.mu.Lock()
		delete(c.nodes, n.addr)
		sock := c.sockets[n.addr]
		c.mu.Unlock()
		var ln net.Listener
		if refused {
			ln = c.listen(n.addr[len("http://"):])
		} else {
			ln = sock.view()
		}
		c.startOn(ln, func(n *mbNode) {
			if snap.Len() > 0 {
				r, err := any(n.group).(snapshotter).Restore(ctx, &snap)
				if err != nil {
					c.tb.Errorf("restore %s: %v", n.addr, err)
				}
				st.restored.Add(int64(r))
			}
		})
		st.gap.Add(int64(time.Since(began)))
		st.restarts.Add(1)
		c.publish()
	}}
}

// report adds the restarts' figures to a roll's: the values restored per
// key held, and the mean time each node had no server.
func (st *inPlace) report(b *testing.B, held int) {
	if held > 0 {
		b.ReportMetric(float64(st.restored.Load())/float64(held), "restored/key")
	}
	if n := st.restarts.Load(); n > 0 {
		b.ReportMetric(float64(st.gap.Load())/float64(n)/1e6, "gap-ms")
	}
}

// benchInPlace runs the control (nothing restarted) and the roll in
// place, and reports as BenchmarkRollingRestart does.
func benchInPlace(b *testing.B, budget int64, cold, refused bool) {
	for range b.N {
		cfg := mbConfigFor(testing.Short(), budget)
		ctl, cLoads, cGets := rollingRestart(b, cfg, roll{kept: !refused})
		var st inPlace
		res, loads, gets := rollingRestart(b, cfg, rollInPlace(cold, refused, &st))
		b.ReportMetric(res.back.extra(ctl.back, res.held), "back-extra/key")
		res.extra = (float64(loads)/float64(gets) - float64(cLoads)/float64(cGets)) * float64(gets)
		b.ReportMetric(float64(cLoads)/float64(cGets), "control-loads/get")
		b.ReportMetric(float64(loads)/float64(gets), "roll-loads/get")
		b.ReportMetric(float64(res.peak), "peak-loads")
		b.ReportMetric(float64(ctl.peak), "control-peak-loads")
		st.report(b, res.held)
		res.report(b)
	}
}
