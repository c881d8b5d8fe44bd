package clocktest_test

import (
	"fmt"
	"time"

	"github.com/geecache/geecache/internal/clocktest"
)

func ExampleClock() {
	c := clocktest.New(time.Unix(0, 0).UTC())
	c.Add(90 * time.Second)
	fmt.Println(c.Now().Format(time.TimeOnly))
	// Output: 00:01:30
}
