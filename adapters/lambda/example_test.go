//go:build !js

package lambda_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Node answers Function URL events; here one is invoked through the
// same JSON path lambda.Start uses. A node that is its only peer needs
// no AWS configuration.
func ExampleNode_ServeURL() {
	cfg := lambda.Config{SelfURL: "geecache-a", Peers: []string{"geecache-a"}, CacheBytes: 1 << 20}
	n, err := lambda.NewNode(cfg, func(cfg lambda.Config, reg *cache.Registry, peers cache.PeerPicker) error {
		_, err := reg.NewGroup("scores", cfg.CacheBytes, getter.Map(map[string]string{"Tom": "630"}), &cache.GroupOptions{Peers: peers})
		return err
	}, &lambda.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer n.Close()

	for _, key := range []string{"Tom", "kkk"} {
		var ev events.LambdaFunctionURLRequest
		ev.RawPath = "/_geecache/scores/" + key // protocol path: /_geecache/{group}/{key}, escaped
		ev.RequestContext.HTTP.Method = "GET"
		payload, _ := json.Marshal(ev)

		out, err := awslambda.NewHandler(n.ServeURL).Invoke(context.Background(), payload)
		if err != nil {
			panic(err)
		}
		var res events.LambdaFunctionURLResponse
		_ = json.Unmarshal(out, &res)
		body, _ := base64.StdEncoding.DecodeString(res.Body)
		if res.StatusCode == 200 {
			fmt.Printf("%s: %d %s\n", key, res.StatusCode, body)
		} else {
			fmt.Printf("%s: %d %s\n", key, res.StatusCode, res.Headers["x-geecache-error"])
		}
	}
	// Output:
	// Tom: 200 630
	// kkk: 404 not_found
}

// ConfigFromEnv reads a node's configuration; in production the lookup is
// os.LookupEnv.
func ExampleConfigFromEnv() {
	env := map[string]string{
		"GEECACHE_SELF_URL":    "https://b.lambda-url.eu-west-1.on.aws",
		"GEECACHE_PEERS":       "https://a.lambda-url.eu-west-1.on.aws,https://b.lambda-url.eu-west-1.on.aws",
		"GEECACHE_INVOKE_MODE": "RESPONSE_STREAM",
	}
	cfg, err := lambda.ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(len(cfg.Peers), cfg.Stream, cfg.CacheBytes, cfg.Cluster.MaxValueBytes, err)

	_, err = lambda.ConfigFromEnv(func(string) (string, bool) { return "", false })
	fmt.Println(err)
	// Output:
	// 2 true 67108864 199991808 <nil>
	// geecache: invalid configuration: GEECACHE_SELF_URL: not set, nor AWS_LAMBDA_FUNCTION_NAME (this node's function name or Function URL, as listed in GEECACHE_PEERS)
	// geecache: invalid configuration: GEECACHE_PEERS: not set (comma-separated function names or URLs of every node, this one included)
}
