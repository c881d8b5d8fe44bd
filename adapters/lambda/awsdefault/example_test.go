//go:build !js

package awsdefault_test

import (
	"context"
	"log"

	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/adapters/lambda/awsdefault"
)

// A net/http node running on EC2 or ECS reaches Lambda peers with the
// credentials of its instance or task role, found by the SDK's default
// chain, and signs for IAM-protected Function URLs with the same ones.
func Example() {
	ctx := context.Background()
	cfg, err := awsdefault.Config(ctx)
	if err != nil {
		log.Fatal(err)
	}
	sig, err := lambda.NewSigV4Transport(&lambda.SigV4Options{Credentials: cfg.Credentials, Region: cfg.Region})
	if err != nil {
		log.Fatal(err)
	}
	// Peers named by function are invoked with the SDK's client on cfg;
	// peers named by URL (Function URLs with AuthType AWS_IAM) are called
	// through sig.
	peers, err := lambda.NewPeers("http://10.0.0.1:8001", &lambda.PeersOptions{
		Peers: lambda.PeerOptions{Client: awsl.NewFromConfig(cfg), Transport: sig},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer peers.Close() // the idle connections of the client and of sig
	if err := peers.Set("http://10.0.0.1:8001", "geecache-a", "https://abc.lambda-url.eu-west-1.on.aws"); err != nil {
		log.Fatal(err)
	}
}
