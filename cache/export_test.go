package cache

// InFlight returns the number of loads g is running now, so that tests can
// wait until abandoned loads and background refreshes have finished.
func (g *Group) InFlight() int { return g.forwardFlight.InFlight() + g.localFlight.InFlight() }

// MaxManyLoads is maxManyLoads, the loads one GetMany runs at once.
const MaxManyLoads = maxManyLoads
