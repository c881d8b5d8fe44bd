package wasmdata_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/geecache/geecache/examples/internal/wasmdata"
	"github.com/geecache/geecache/getter"
)

func Example() {
	d := wasmdata.Dataset()
	fmt.Println(d["Tom"], d[wasmdata.Key(3)], len(d))
	v, _ := wasmdata.EchoLoad(context.Background(), "..")
	_, err := wasmdata.EchoLoad(context.Background(), wasmdata.EchoMissing)
	fmt.Println(string(v), errors.Is(err, getter.ErrNotFound))
	// Output:
	// 630 21 305
	// v=.. true
}
