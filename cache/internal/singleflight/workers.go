package singleflight

import "time"

// workerIdle is how long a worker waits for another load before it ends.
const workerIdle = 100 * time.Millisecond

// A task is a load that runs detached from its callers, on a worker.
type task[V, A any] struct {
	key string
	c   *call[V, A]
	l   Loader[V, A]
	arg A // by value: no allocation of its own
}

// A parked worker waits for its next load on tasks; a zero task ends it.
type parked[V, A any] struct {
	tasks chan task[V, A] // buffered: handing a worker a load never blocks
	tick  uint64          // Group.tick when it parked
}

// takeIdle returns the tasks of the worker that parked last, now taken, or
// nil if none is parked. g.mu is held.
func (g *Group[V, A]) takeIdle() chan task[V, A] {
	n := len(g.idle)
	if n == 0 {
		return nil
	}
	w := g.idle[n-1]
	g.idle[n-1] = parked[V, A]{}
	g.idle = g.idle[:n-1]
	return w.tasks
}

// detach runs t on a worker: the one whose tasks takeIdle returned, or a
// new one if that is nil. A worker runs loads one after another, and ends
// once it has been parked for a whole round of the reaper (see reap).
// Reusing goroutines saves, besides starting one, growing its stack anew
// for every load (a load through net/http needs a few times the starting
// stack; growing it took a tenth of a remote fetch's CPU time).
//
// A parked worker waits on a channel of its own, with no timer: a timer in
// the select of every wait (the runtime puts a timer channel's timer in
// its heap each time a goroutine blocks on it) made a load cost 21% more
// CPU time (BenchmarkDo/background/serial: 1.32 s per million against
// 1.09, the medians of six alternating runs).
func (g *Group[V, A]) detach(tasks chan task[V, A], t task[V, A]) {
	if tasks == nil {
		go g.worker(make(chan task[V, A], 1), t)
		return
	}
	tasks <- t
}

// worker runs t, then the loads handed to it on tasks, until the reaper
// ends it. A load that calls runtime.Goexit ends it too (see run); it is
// not parked then, so no load is handed to it.
func (g *Group[V, A]) worker(tasks chan task[V, A], t task[V, A]) {
	for t.c != nil {
		g.run(&t.c.ctx, t.key, t.c, t.l, t.arg)
		t = task[V, A]{} // keep nothing of a finished load alive
		g.park(tasks)
		t = <-tasks
	}
}

// park puts the worker of tasks on the idle list, and starts the reaper if
// it is not running.
func (g *Group[V, A]) park(tasks chan task[V, A]) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idle = append(g.idle, parked[V, A]{tasks: tasks, tick: g.tick})
	if !g.reaping {
		g.reaping = true
		if g.reaper == nil {
			g.reaper = time.AfterFunc(workerIdle, g.reap)
		} else {
			g.reaper.Reset(workerIdle)
		}
	}
}

// reap runs every workerIdle while workers are parked: it ends those that
// parked before the previous round, and so have waited a whole round for a
// load. A worker thus ends between one and two workerIdle after its last
// load. The idle list is in the order the workers parked (takeIdle takes
// the last), so those are its first ones.
func (g *Group[V, A]) reap() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tick++
	n := 0
	for n < len(g.idle) && g.idle[n].tick+2 <= g.tick {
		g.idle[n].tasks <- task[V, A]{}
		n++
	}
	g.idle = append(g.idle[:0], g.idle[n:]...)
	clear(g.idle[len(g.idle):cap(g.idle)]) // the ended workers' channels
	if len(g.idle) == 0 {
		g.reaping = false
		return
	}
	g.reaper.Reset(workerIdle)
}
