package singleflight

import "context"

// A Claim is a load of one key that its caller runs itself, on its own
// goroutine, rather than on a worker: a batch that fetches many keys in
// one request claims each, so that another caller asking for one of them
// meanwhile joins the batch's load instead of starting one of its own.
type Claim[V, A any] struct {
	c      *call[V, A]
	joined bool // a load of the key was in flight: Wait for it
}

// Joined reports whether a load of the key was already in flight when the
// claim was made: the caller waits for it (Wait) and loads nothing.
func (cl Claim[V, A]) Joined() bool { return cl.joined }

// Claim makes the caller the loader of key, unless a load of key is in
// flight: then the Claim joins it. ctx is the caller's; its values (not
// its end) are the load's, as for DoLoader. A loader must call Finish,
// exactly once, whatever happens.
func (g *Group[V, A]) Claim(ctx context.Context, key string) Claim[V, A] {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls == nil {
		g.calls = make(map[string]*call[V, A])
	}
	return g.claimLocked(ctx, key, nil)
}

// ClaimMany is Claim of each of keys, into claims (of the same length),
// under one lock and with one allocation for the records of the keys it
// claims rather than one per key: a batch's keys are claimed together.
// Each claim is Finished (or Waited for) as one from Claim is.
func (g *Group[V, A]) ClaimMany(ctx context.Context, keys []string, claims []Claim[V, A]) {
	slab := make([]call[V, A], len(keys))
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls == nil {
		g.calls = make(map[string]*call[V, A])
	}
	for i, key := range keys {
		claims[i] = g.claimLocked(ctx, key, &slab[i])
	}
}

// claimLocked claims key, in c (nil: a new record) unless it joins a load
// in flight. g.mu is held. A claimed record has no done channel until a
// caller joins it (join): its loader finishes it and never waits.
func (g *Group[V, A]) claimLocked(ctx context.Context, key string, c *call[V, A]) Claim[V, A] {
	if in, ok := g.calls[key]; ok {
		g.join(in)
		return Claim[V, A]{c: in, joined: true}
	}
	g.running++
	if c == nil {
		c = new(call[V, A])
	}
	c.waiters, c.group, c.key = 1, g, key
	c.ctx.first = ctx
	g.calls[key] = c
	return Claim[V, A]{c: c}
}

// Wait waits for the load a joined Claim of key joined, or for ctx to end.
func (g *Group[V, A]) Wait(ctx context.Context, key string, cl Claim[V, A]) (V, error) {
	return g.wait(ctx, key, cl.c)
}

// Others reports whether callers other than the loader wait for the
// claimed load of key now.
func (g *Group[V, A]) Others(cl Claim[V, A]) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return cl.c.waiters > 1
}

// Run runs the claimed load of key as DoLoader runs a load: l.Load(ctx,
// key, arg, f) on a worker, with the load's own context (cancelled once
// every caller has left) and f the claim's Flight (a Publish through it
// reaches the claim's joiners), and waits for it or for ctx to end. The
// load finishes the claim: the caller must not Finish it. A joined claim
// is waited for.
func (g *Group[V, A]) Run(ctx context.Context, key string, cl Claim[V, A], l Loader[V, A], arg A) (V, error) {
	if cl.joined {
		return g.wait(ctx, key, cl.c)
	}
	g.mu.Lock()
	if cl.c.done == nil {
		cl.c.done = make(chan struct{})
	}
	tasks := g.takeIdle()
	g.mu.Unlock()
	g.detach(tasks, task[V, A]{key: key, c: cl.c, l: l, arg: arg})
	return g.wait(ctx, key, cl.c)
}

// Finish ends the claimed load of key with v and err: every caller that
// joined it gets them, and the key is free for the next load.
// A zero Claim (one handed over to another goroutine) is left alone.
func (g *Group[V, A]) Finish(key string, cl Claim[V, A], v V, err error) {
	if cl.c == nil {
		return
	}
	g.mu.Lock()
	g.running--
	first := g.settle(cl.c, v, err)
	grace, done := cl.c.grace, cl.c.done
	cl.c.grace = nil
	g.mu.Unlock()
	cl.c.end(grace)
	if first && done != nil { // nil: nobody joined, and nobody can now
		close(done)
	}
}

// ForgetAll is Forget of every key: no new caller joins a load in flight
// now. A cache calls it when it drops all its keys at once.
func (g *Group[V, A]) ForgetAll() {
	g.mu.Lock()
	clear(g.calls)
	g.mu.Unlock()
}

// JoinMany joins, for each of keys, the load of it in flight, if there is
// one, under one lock: claims[i] (claims has the length of keys) is then a
// joined Claim, to Wait for; else it is the zero Claim, and nothing is
// claimed for the key. It returns how many it joined.
func (g *Group[V, A]) JoinMany(keys []string, claims []Claim[V, A]) int {
	n := 0
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, key := range keys {
		if c, ok := g.calls[key]; ok {
			g.join(c)
			claims[i] = Claim[V, A]{c: c, joined: true}
			n++
		} else {
			claims[i] = Claim[V, A]{}
		}
	}
	return n
}
