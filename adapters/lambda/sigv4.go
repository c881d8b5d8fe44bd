package lambda

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/geecache/geecache/adapters/nethttp"
)

// emptyPayloadHash is the SHA-256 of an empty body, in hex: peer requests
// have none.
const emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// SigV4Options configures a SigV4Transport. The zero value of a field means
// its default; a nil pointer means all defaults.
type SigV4Options struct {
	// Credentials sign the requests. Nil means EnvCredentials (on
	// Lambda, the function's role). For the SDK's full default chain, use
	// awsdefault.Config's.
	Credentials aws.CredentialsProvider

	// Region is the region of the Function URLs. "" means AWS_REGION (or
	// AWS_DEFAULT_REGION).
	Region string

	// Base sends the signed requests. Nil means nethttp.NewTransport().
	Base http.RoundTripper

	// Now replaces time.Now as the signing time; it is meant for tests.
	Now func() time.Time
}

// A SigV4Transport signs each request with AWS Signature Version 4 for the
// service "lambda" before sending it, as a Function URL whose AuthType is
// AWS_IAM requires. Set it as the Transport of a nethttp.PoolOptions or
// nethttp.ClientOptions (or of an http.Client), so that a net/http node, a
// Lambda node or any Go program reaches IAM-protected nodes by URL; the
// caller's identity needs lambda:InvokeFunctionUrl and, for URLs created
// since October 2025, lambda:InvokeFunction on them
// (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html). Peer requests
// have no body, so the payload hash is that of an empty body; a request
// with a body is refused. It is safe for concurrent use.
type SigV4Transport struct {
	creds  aws.CredentialsProvider
	region string
	base   http.RoundTripper
	signer *v4.Signer
	now    func() time.Time
}

// NewSigV4Transport returns a SigV4Transport configured by opts (nil for
// the defaults). It fails, with an error wrapping ErrConfig, if no region
// is given or set in the environment.
func NewSigV4Transport(opts *SigV4Options) (*SigV4Transport, error) {
	var o SigV4Options
	if opts != nil {
		o = *opts
	}
	if o.Credentials == nil {
		o.Credentials = EnvCredentials{}
	}
	if o.Region == "" {
		o.Region = envRegion()
	}
	if o.Region == "" {
		return nil, fmt.Errorf("geecache: %w: SigV4Options.Region is empty and AWS_REGION is not set", ErrConfig)
	}
	if o.Base == nil {
		o.Base = nethttp.NewTransport()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if _, ok := o.Credentials.(*aws.CredentialsCache); !ok {
		o.Credentials = aws.NewCredentialsCache(o.Credentials)
	}
	return &SigV4Transport{creds: o.Credentials, region: o.Region, base: o.Base, signer: v4.NewSigner(), now: o.Now}, nil
}

// RoundTrip signs a copy of req and sends it with the base transport.
func (t *SigV4Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		_ = req.Body.Close()
		return nil, errors.New("geecache: SigV4Transport signs requests without a body only")
	}
	creds, err := t.creds.Retrieve(req.Context())
	if err != nil {
		return nil, fmt.Errorf("geecache: AWS credentials: %w", err)
	}
	r := req.Clone(req.Context())
	if err := t.signer.SignHTTP(req.Context(), creds, r, emptyPayloadHash, "lambda", t.region, t.now()); err != nil {
		return nil, fmt.Errorf("geecache: signing request: %w", err)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the base transport's idle connections.
func (t *SigV4Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
