//go:build !js

package lambda_test

import (
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/credentials"
	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A net/http node joins a cluster of Lambda functions: keys owned by a
// function are fetched through the Lambda Invoke API (authenticated by
// IAM), keys owned by a URL over HTTP. Every node gets the same names.
func ExampleNewPeers() {
	// On Lambda leave Client nil: NewPeers then makes one with the
	// function role's credentials and region from the environment.
	// Elsewhere, awsl.NewFromConfig(cfg) with awsdefault.Config's cfg
	// loads the SDK's full default chain.
	client := awsl.New(awsl.Options{Region: "eu-west-1"})
	peers, err := lambda.NewPeers("http://10.0.0.1:8001", &lambda.PeersOptions{
		Qualifier: "live",
		Logger:    slog.New(slog.DiscardHandler),
		Peers:     lambda.PeerOptions{Client: client},
	})
	if err != nil {
		panic(err)
	}
	defer peers.Close()
	if err := peers.Set("http://10.0.0.1:8001", "geecache-a", "geecache-b"); err != nil {
		panic(err)
	}
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), &cache.GroupOptions{Peers: peers}); err != nil {
		panic(err)
	}
	for _, key := range []string{"Tom", "Jack", "Kim"} {
		_, remote := peers.PickPeer(key)
		fmt.Printf("%s: owner %s, remote %v\n", key, peers.Owner(key), remote)
	}
	// Output:
	// Tom: owner geecache-b, remote true
	// Jack: owner http://10.0.0.1:8001, remote false
	// Kim: owner geecache-b, remote true
}

// A client reaches a node whose Function URL has AuthType AWS_IAM by
// signing its requests with SigV4, here through a nethttp.Client; a
// nethttp.Pool or a lambda.Peers takes the transport the same way.
func ExampleNewSigV4Transport() {
	// Empty Credentials and Region mean those in the environment; for the
	// SDK's full default chain, use awsdefault.Config's.
	tr, err := lambda.NewSigV4Transport(&lambda.SigV4Options{
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Region:      "eu-west-1",
	})
	if err != nil {
		panic(err)
	}
	c, err := nethttp.NewClient("https://abc.lambda-url.eu-west-1.on.aws", &nethttp.ClientOptions{Transport: tr})
	if err != nil {
		panic(err)
	}
	defer c.CloseIdleConnections() // those of tr too
	fmt.Println(c.Addr())
	// Output: https://abc.lambda-url.eu-west-1.on.aws
}
