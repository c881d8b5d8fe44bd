package singleflight

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
	"weak"
)

// A load that published early and then ended keeps nothing alive for the
// rest of its grace: the grace timer is stopped when the load ends, so the
// published value can be collected at once rather than an hour later.
// (Before, the timer held the load's record, value and all, until it fired,
// to cancel a context the load's end had cancelled already.)
func TestPublishedLoadEndingFreesItsRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[*[1 << 16]byte, struct{}]
		w := func() weak.Pointer[[1 << 16]byte] {
			v := new([1 << 16]byte)
			got, err := g.DoLoader(t.Context(), "k", flightFunc[*[1 << 16]byte](func(_ context.Context, f Flight[*[1 << 16]byte, struct{}]) (*[1 << 16]byte, error) {
				if !f.Publish(v, nil, time.Hour) {
					t.Error("Publish refused")
				}
				return nil, nil // ends long before the grace
			}), struct{}{})
			if got != v || err != nil {
				t.Errorf("Do = %p, %v; want the published value", got, err)
			}
			return weak.Make(v)
		}()
		synctest.Wait() // the load has ended
		runtime.GC()
		runtime.GC()
		if w.Value() != nil {
			t.Error("the published value is still reachable after its load ended (the grace timer holds it)")
		}
		time.Sleep(time.Minute) // idle workers end
	})
}
