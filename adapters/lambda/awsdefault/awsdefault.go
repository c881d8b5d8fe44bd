// Package awsdefault loads the AWS SDK's full default configuration for
// the clients of package lambda: credentials from the environment, shared
// files, SSO, web identity, and container or instance roles, and the
// region from the environment or shared files. A program that runs
// outside Lambda (a net/http node on EC2 or ECS, a developer's tool) uses
// it to reach Lambda nodes; a node on Lambda does not need it, since its
// role's credentials are in its environment.
//
// It is a package of its own because the chain's providers (STS, SSO and
// instance metadata clients) make a binary about 30% larger, and Go links
// an imported package's initialisation whether it is used or not.
package awsdefault

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
)

// Config loads the SDK's default configuration, without retries (a failed
// peer fetch falls back to a local load at once, and a throttled peer is
// not pressed further), over a keep-alive pool sized like
// nethttp.NewTransport's (every peer is the same Lambda API host) with a
// 5 s dial timeout. It reads the environment and configuration files, and
// does not contact AWS. The SDK's lambda.NewFromConfig(cfg) makes the
// client for lambda.PeerOptions.Client (whose idle connections
// lambda.Peers.Close closes); its Credentials and Region also suit
// lambda.SigV4Options.
func Config(ctx context.Context) (aws.Config, error) {
	hc := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = 5 * time.Second }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConns = 0
			tr.MaxIdleConnsPerHost = peerhttp.MaxIdleConnsPerHost
		})
	cfg, err := config.LoadDefaultConfig(ctx, config.WithHTTPClient(hc),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }))
	if err != nil {
		return aws.Config{}, fmt.Errorf("geecache: loading AWS configuration: %w", err)
	}
	if b, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		// Built now, with what the configuration added (a CA bundle), so
		// that lambda.Peers.Close reaches its connections.
		cfg.HTTPClient = b.Freeze()
	}
	return cfg, nil
}
