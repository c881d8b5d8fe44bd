package singleflight

import "time"

// workerIdle is how long a worker waits for another load before it ends.
const workerIdle = 100 * time.Millisecond

// A task is a load that runs detached from its callers, on a worker.
type task[V any] struct {
	key string
	c   *call[V]
	l   Loader[V]
	arg any
}

// detach runs t on a worker: an idle one if there is one, else a new one.
// A worker runs loads one after another and ends after workerIdle without
// one. Reusing goroutines saves, besides starting one, growing its stack
// anew for every load (a load through net/http needs a few times the
// starting stack; growing it took a tenth of a remote fetch's CPU time).
func (g *Group[V]) detach(t task[V]) {
	select {
	case g.work <- t: // an idle worker took it
	default:
		go g.worker(t)
	}
}

// worker runs t, then the loads handed to it until it has been idle for
// workerIdle (it ends between one and two workerIdle after its last load:
// its timer is re-armed once per workerIdle, not once per load). A load
// that calls runtime.Goexit ends it (see run).
func (g *Group[V]) worker(t task[V]) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		g.run(&t.c.ctx, t.key, t.c, t.l, t.arg)
		t = task[V]{} // keep nothing of a finished load alive
		used := true
		for t.c == nil {
			select {
			case t = <-g.work:
			case <-idle.C:
				if !used {
					return
				}
				used = false
				idle.Reset(workerIdle)
			}
		}
	}
}
