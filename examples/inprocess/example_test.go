package main

import (
	"context"
	"os"
)

// The whole demo, with an instant database. Its output is deterministic:
// the ring places keys the same way on every run and machine.
func Example() {
	if err := run(context.Background(), os.Stdout, 0); err != nil {
		panic(err)
	}
	// Output:
	// Tom is owned by node-a
	// msg="[SlowDB] search key" node=node-a key=Tom
	//   node-a: Tom = 630
	//   node-b: Tom = 630
	//   node-c: Tom = 630
	// Jack is owned by node-c
	// msg="[SlowDB] search key" node=node-c key=Jack
	//   node-a: Jack = 589
	//   node-b: Jack = 589
	//   node-c: Jack = 589
	// Sam is owned by node-b
	// msg="[SlowDB] search key" node=node-b key=Sam
	//   node-a: Sam = 567
	//   node-b: Sam = 567
	//   node-c: Sam = 567
	// kkk is owned by node-b
	// msg="[SlowDB] search key" node=node-b key=kkk
	//   node-a: kkk -> geecache: group "scores", key "kkk": kkk not exist: key not found
	// msg="[SlowDB] search key" node=node-b key=kkk
	//   node-b: kkk -> geecache: group "scores", key "kkk": kkk not exist: key not found
	// msg="[SlowDB] search key" node=node-b key=kkk
	//   node-c: kkk -> geecache: group "scores", key "kkk": kkk not exist: key not found
	// node-a: gets=4 local loads=1 peer loads=3 hot items=2
	// node-b: gets=4 local loads=4 peer loads=2 hot items=2
	// node-c: gets=4 local loads=1 peer loads=3 hot items=2
}
