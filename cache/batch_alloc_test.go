package cache_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/geecache/geecache/cache"
)

// A GetMany of keys that two peers own, cold here and warm on them, costs
// few allocations per key, both sides together: the batch's keys are
// claimed with one record allocation in all (not two per key), and the
// keys of each owner are sorted without growing a slice per owner. What
// is left per key is the value's copy and its entry in the hot cache.
func TestGetManyAllocationsPerKey(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are not asserted under the race detector")
	}
	const page, pages = 200, 6
	var db sync.Map
	nodes := newMemCluster(t, &db)
	keys := make([][]string, pages)
	for p := range keys {
		for i := range page {
			k := fmt.Sprintf("%c-p%d-%d", 'b'+i%2, p, i) // owned by nodes 1 and 2
			db.Store(k, "v:"+k)
			n := nodes[1+i%2]
			if _, _, err := serveKey(t.Context(), n.reg, n.group, cache.OpGet, k); err != nil {
				t.Fatal(err)
			}
			keys[p] = append(keys[p], k)
		}
	}
	p, ok := 0, 0
	each := func(i int, v cache.ByteView, err error) {
		if err == nil && v.String() == "v:"+keys[p][i] {
			ok++
		}
	}
	n := testing.AllocsPerRun(pages-1, func() {
		nodes[0].group.GetMany(t.Context(), keys[p], each)
		p++
	})
	if ok != pages*page {
		t.Fatalf("%d of %d values right", ok, pages*page)
	}
	perKey := n / page
	t.Logf("%.2f allocations per key", perKey)
	if perKey > 2.5 {
		t.Fatalf("%.2f allocations per key of a GetMany of %d remote keys; want at most 2.5", perKey, page)
	}
}
