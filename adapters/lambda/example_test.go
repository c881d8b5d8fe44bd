package lambda_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Handler answers Function URL events; here one is invoked through the
// same JSON path lambda.Start uses.
func ExampleHandler() {
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), nil); err != nil {
		panic(err)
	}
	srv, err := protocol.NewServer(reg, &protocol.ServerOptions{MaxValueBytes: lambda.MaxValueBytes})
	if err != nil {
		panic(err)
	}
	h, err := lambda.NewHandler(srv, nil)
	if err != nil {
		panic(err)
	}

	for _, key := range []string{"Tom", "kkk"} {
		var ev events.LambdaFunctionURLRequest
		ev.RawPath = protocol.Path("scores", key)
		ev.RequestContext.HTTP.Method = "GET"
		payload, _ := json.Marshal(ev)

		out, err := awslambda.NewHandler(h.ServeURL).Invoke(context.Background(), payload)
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
		lambda.EnvSelfURL: "https://b.lambda-url.eu-west-1.on.aws",
		lambda.EnvPeers:   "https://a.lambda-url.eu-west-1.on.aws,https://b.lambda-url.eu-west-1.on.aws",
	}
	cfg, err := lambda.ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(len(cfg.Peers), cfg.Mode, cfg.CacheBytes, err)

	_, err = lambda.ConfigFromEnv(func(string) (string, bool) { return "", false })
	fmt.Println(err)
	// Output:
	// 2 BUFFERED 67108864 <nil>
	// geecache: invalid configuration: GEECACHE_SELF_URL: not set, nor AWS_LAMBDA_FUNCTION_NAME (this node's function name or Function URL, as listed in GEECACHE_PEERS)
	// geecache: invalid configuration: GEECACHE_PEERS: not set (comma-separated function names or URLs of every node, this one included)
}
