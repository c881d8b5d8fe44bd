//go:build !js

package lambda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// emptyPayloadHash is the SHA-256 of an empty body, in hex: GET and DELETE
// peer requests have none.
const emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// maxBufferedBody is the largest body a sigV4Transport reads into memory
// to sign it, when the request cannot give it again (no GetBody): the
// largest value a node sends by default.
const maxBufferedBody = protocol.DefaultMaxValueBytes

// SigV4Options configures NewSigV4Transport. The zero value of a field means
// its default; a nil pointer means all defaults.
type SigV4Options struct {
	// Credentials sign the requests. Nil means the credentials in the
	// environment, read on each use (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN: on Lambda, the function's
	// role). For the SDK's full default chain, use
	// awsdefault.Config's.
	Credentials aws.CredentialsProvider

	// Region is the region of the Function URLs. "" means AWS_REGION (or
	// AWS_DEFAULT_REGION).
	Region string

	// Base sends the signed requests. Nil means nethttp.NewTransport().
	Base http.RoundTripper
}

// A sigV4Transport is the RoundTripper NewSigV4Transport returns.
type sigV4Transport struct {
	creds  aws.CredentialsProvider
	region string
	base   http.RoundTripper
	signer *v4.Signer
}

// NewSigV4Transport returns an http.RoundTripper that signs each request with AWS Signature Version 4 for the
// service "lambda" before sending it, as a Function URL whose AuthType is
// AWS_IAM requires. Set it as the Transport of a nethttp.PoolOptions,
// nethttp.ClientOptions or PeerOptions (or of an http.Client), so that a
// net/http node, a Lambda node or any Go program reaches IAM-protected
// nodes by URL; the
// caller's identity needs lambda:InvokeFunctionUrl and, for URLs created
// since October 2025, lambda:InvokeFunction on them
// (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html). The
// payload hash is that of the body: a peer's Set (PUT) carries the value.
// A body the request can give again (GetBody, as http.NewRequest sets for
// in-memory readers) is hashed from a second copy and sent as it is;
// another is read into memory first, up to 64 MiB (the protocol's default
// limit; a longer one is an error). It is safe for concurrent use, and
// its CloseIdleConnections (called by http.Client's) closes the base
// transport's idle connections.
//
// opts may be nil for the defaults. It fails, with an error wrapping cache.ErrConfig, if no region
// is given or set in the environment.
func NewSigV4Transport(opts *SigV4Options) (http.RoundTripper, error) {
	var o SigV4Options
	if opts != nil {
		o = *opts
	}
	if o.Credentials == nil {
		o.Credentials = envCredentials{}
	}
	if o.Region == "" {
		o.Region = envRegion()
	}
	if o.Region == "" {
		return nil, fmt.Errorf("geecache: %w: SigV4Options.Region is empty and AWS_REGION is not set", cache.ErrConfig)
	}
	if o.Base == nil {
		o.Base = nethttp.NewTransport()
	}
	if _, ok := o.Credentials.(*aws.CredentialsCache); !ok {
		o.Credentials = aws.NewCredentialsCache(o.Credentials)
	}
	return &sigV4Transport{creds: o.Credentials, region: o.Region, base: o.Base, signer: v4.NewSigner()}, nil
}

// RoundTrip signs a copy of req and sends it with the base transport.
func (t *sigV4Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context()) // shares req.Body, which is sent
	hash, err := payloadHash(r)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("geecache: signing request: %w", err)
	}
	creds, err := t.creds.Retrieve(req.Context())
	if err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, fmt.Errorf("geecache: AWS credentials: %w", err)
	}
	if err := t.signer.SignHTTP(req.Context(), creds, r, hash, "lambda", t.region, time.Now()); err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, fmt.Errorf("geecache: signing request: %w", err)
	}
	return t.base.RoundTrip(r)
}

// payloadHash returns the hex SHA-256 of r's body. A body r can give again
// is hashed from a second copy; another is read into memory (at most
// maxBufferedBody bytes), and r's Body, GetBody and ContentLength are set
// to send that copy.
func payloadHash(r *http.Request) (string, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return emptyPayloadHash, nil
	}
	h := sha256.New()
	if r.GetBody != nil {
		b, err := r.GetBody()
		if err != nil {
			return "", fmt.Errorf("re-reading the body: %w", err)
		}
		n, err := io.Copy(h, b)
		_ = b.Close()
		if err != nil {
			return "", fmt.Errorf("reading the body: %w", err)
		}
		if r.ContentLength > 0 && n != r.ContentLength {
			return "", fmt.Errorf("body of %d bytes, announced %d", n, r.ContentLength)
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	if r.ContentLength > maxBufferedBody {
		return "", fmt.Errorf("a body of %d bytes that cannot be read twice is over %d", r.ContentLength, int64(maxBufferedBody))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBufferedBody+1))
	_ = r.Body.Close()
	switch {
	case err != nil:
		return "", fmt.Errorf("reading the body: %w", err)
	case len(body) > maxBufferedBody:
		return "", fmt.Errorf("a body that cannot be read twice is over %d bytes", int64(maxBufferedBody))
	case r.ContentLength > 0 && int64(len(body)) != r.ContentLength:
		return "", fmt.Errorf("body of %d bytes, announced %d", len(body), r.ContentLength)
	}
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.Body, _ = r.GetBody()
	if len(body) == 0 {
		r.Body, r.GetBody = http.NoBody, nil
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CloseIdleConnections closes the base transport's idle connections.
func (t *sigV4Transport) CloseIdleConnections() {
	peerhttp.CloseIdle(t.base)
}
