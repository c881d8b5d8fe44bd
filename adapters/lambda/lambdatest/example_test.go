//go:build !js

package lambdatest_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/adapters/lambda/lambdatest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Lambda node, run in-process by NewRuntime through the same JSON path
// as the Lambda runtime, and reached over plain HTTP through a Front, as
// callers reach a Function URL. Under the emulator, give NewFront its
// address ("http://127.0.0.1:9001") instead.
func Example() {
	cfg := lambda.Config{SelfURL: "geecache-a", Peers: []string{"geecache-a"}, CacheBytes: 1 << 20}
	node, err := lambda.NewNode(cfg, func(cfg lambda.Config, reg *cache.Registry, peers cache.PeerPicker) error {
		_, err := reg.NewGroup("scores", cfg.CacheBytes, getter.Map(map[string]string{"Tom": "630"}), &cache.GroupOptions{Peers: peers})
		return err
	}, &lambda.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer node.Close()
	runtime, endpoint := lambdatest.NewRuntime(awslambda.NewHandler(node.ServeURL).Invoke)
	defer runtime.Close()
	front, err := lambdatest.NewFront([]string{endpoint}, nil)
	if err != nil {
		panic(err)
	}
	defer front.Close()
	url := httptest.NewServer(front)
	defer url.Close()

	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url.URL+"/_geecache/scores/Tom", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(body))
	// Output: 200 630
}
