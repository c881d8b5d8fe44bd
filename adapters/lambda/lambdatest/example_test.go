package lambdatest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/adapters/lambda/lambdatest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Lambda node's Handler, run in-process by NewRuntime through the same
// JSON path as the Lambda runtime, and reached over plain HTTP through a
// Front, as callers reach a Function URL.
func Example() {
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), nil); err != nil {
		panic(err)
	}
	srv, err := protocol.NewServer(reg, nil)
	if err != nil {
		panic(err)
	}
	h, err := lambda.NewHandler(srv, nil)
	if err != nil {
		panic(err)
	}
	runtime, endpoint := lambdatest.NewRuntime(awslambda.NewHandler(h.ServeURL).Invoke)
	defer runtime.Close()
	front, err := lambdatest.NewFront([]string{endpoint}, nil)
	if err != nil {
		panic(err)
	}
	defer front.Close()
	url := httptest.NewServer(front)
	defer url.Close()

	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url.URL+protocol.Path("scores", "Tom"), nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(body))
	// Output: 200 630
}
