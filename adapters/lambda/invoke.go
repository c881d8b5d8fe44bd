//go:build !js

package lambda

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/lambda/internal/urlevent"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// Errors of a fetch from a peer named by function, besides the protocol's. Both are peer
// failures: the calling group loads the key itself, and counts the failure
// toward the peer's ejection (cache.PeerPolicy).
var (
	// ErrThrottled: Lambda refused the invocation (429
	// TooManyRequestsException: the peer's reserved concurrency, or the
	// account's, is used up). The error also matches a *cache.PeerError
	// with Status 429.
	ErrThrottled = errors.New("peer function throttled")
	// ErrFunctionError: the peer function failed instead of answering (a
	// crash, a timeout, out of memory). The error also matches a
	// *cache.PeerError with Status 502.
	ErrFunctionError = errors.New("peer function failed")
)

// InvokeAPI is the method of the AWS SDK's Lambda client
// (*lambda.Client of github.com/aws/aws-sdk-go-v2/service/lambda) that a
// Peers calls to fetch from peers named by function (PeerOptions.Client).
// Tests may supply their own.
type InvokeAPI interface {
	Invoke(ctx context.Context, in *awsl.InvokeInput, optFns ...func(*awsl.Options)) (*awsl.InvokeOutput, error)
}

// invokeConfig is how peers named by function are invoked: the
// PeersOptions' Qualifier and Resolve.
type invokeConfig struct {
	qualifier string
	resolve   func(name string) (function, endpoint string)
}

// newInvokeAPI returns the Lambda client that PeerOptions.Client defaults
// to: credentials and region from the environment (envCredentials), no
// retries, sending with hc (nil means a client over nethttp.NewTransport,
// whose keep-alive pool matters: every peer is the same Lambda API host).
// The SDK's full default chain (shared files, SSO, container and instance
// roles) is in package awsdefault, which a program outside Lambda can use
// instead; it is not linked into a node that does not import it.
func newInvokeAPI(hc *http.Client) (*awsl.Client, error) {
	region := envRegion()
	if region == "" {
		return nil, fmt.Errorf("geecache: %w: no region: AWS_REGION is not set (pass a Client made with package awsdefault to use the full default configuration)", cache.ErrConfig)
	}
	if hc == nil {
		hc = &http.Client{Transport: nethttp.NewTransport()}
	}
	return awsl.New(awsl.Options{
		Region:      region,
		Credentials: aws.NewCredentialsCache(envCredentials{}),
		HTTPClient:  hc,
		Retryer:     aws.NopRetryer{},
	}), nil
}

// closeIdleConnections closes the idle connections of api's HTTP client,
// if it is a Lambda client whose HTTP client keeps any (as newInvokeAPI's
// and awsdefault.Config's do).
func closeIdleConnections(api InvokeAPI) {
	if c, ok := api.(*awsl.Client); ok {
		peerhttp.CloseIdle(c.Options().HTTPClient)
	}
}

// An invokeClient fetches values from one peer function through the
// Lambda Invoke API. It sends the protocol's request, built and signed by
// a protocol.Client, as a Function URL event, and reads the Function URL
// response (BUFFERED or RESPONSE_STREAM) with the same protocol.Client, so
// the peer serves it with its ordinary Handler. It implements
// cache.Peer and is safe for concurrent use.
type invokeClient struct {
	name      string // the peer's name on the ring
	function  string // the FunctionName sent
	qualifier *string
	api       InvokeAPI
	optFns    []func(*awsl.Options)
	proto     *protocol.Client
	timeout   time.Duration
}

// newInvokeClient returns the client of the peer named name.
func newInvokeClient(name string, api InvokeAPI, o invokeConfig, proto *protocol.Client, timeout time.Duration) *invokeClient {
	c := &invokeClient{name: name, function: name, api: api, proto: proto, timeout: timeout}
	if m := functionName.FindStringSubmatch(name); o.qualifier != "" && (m == nil || m[2] == "") {
		c.qualifier = aws.String(o.qualifier) // a name with its own qualifier keeps it
	}
	if o.resolve != nil {
		fn, ep := o.resolve(name)
		if fn != "" {
			c.function = fn
		}
		if ep != "" {
			c.optFns = []func(*awsl.Options){func(lo *awsl.Options) { lo.BaseEndpoint = aws.String(ep) }}
		}
	}
	return c
}

// Addr returns the peer's name (its function name or ARN).
func (c *invokeClient) Addr() string { return c.name }

// Do sends req to the peer function (cache.Peer), one Invoke per
// protocol request, and gives its answers to reply. A key the peer's
// source does not have is answered with an error wrapping
// getter.ErrNotFound; throttling yields ErrThrottled, a function failure
// ErrFunctionError, another error answer a *cache.PeerError, an answer
// that fails the integrity checks cache.ErrIntegrity, and the SDK's errors
// are wrapped as they are. Each error names the peer. Each Invoke ends
// when ctx does, or after the timeout. An Invoke carries no interim
// answer: reply.Loading is never called.
func (c *invokeClient) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return protocol.Do(ctx, c, req, reply)
}

// Get fetches key of group from the peer function, with the lifetime the
// owner gives the value (or its "not found"; 0: none).
func (c *invokeClient) Get(ctx context.Context, group, key string, peek bool, _ protocol.Listener) ([]byte, time.Duration, error) {
	return c.do(ctx, c.proto.NewRequest(ctx, c.name, group, key, peek))
}

// Remove makes the peer function drop key of group from its memory, for
// Group.Remove.
func (c *invokeClient) Remove(ctx context.Context, group, key string) error {
	_, _, err := c.do(ctx, c.proto.NewRemoveRequest(ctx, c.name, group, key))
	return err
}

// Set makes the peer function, the owner of key, store value for ttl, for
// Group.Set.
func (c *invokeClient) Set(ctx context.Context, group, key string, value []byte, ttl time.Duration) error {
	_, _, err := c.do(ctx, c.proto.NewSetRequest(ctx, c.name, group, key, value, ttl))
	return err
}

// do invokes the peer function with a protocol request and reads its
// answer.
func (c *invokeClient) do(ctx context.Context, preq protocol.Request) ([]byte, time.Duration, error) {
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	payload, err := json.Marshal(invokeEvent(preq))
	if err != nil {
		return nil, 0, fmt.Errorf("peer %s: encoding event: %w", c.name, err)
	}
	out, err := c.api.Invoke(ctx, &awsl.InvokeInput{FunctionName: &c.function, Qualifier: c.qualifier, Payload: payload}, c.optFns...)
	if err != nil {
		return nil, 0, c.invokeError(err)
	}
	if out.FunctionError != nil {
		return nil, 0, c.functionError(fmt.Sprintf("%s: %.500s", *out.FunctionError, out.Payload))
	}
	ans, err := urlevent.Decode(out.Payload)
	switch {
	case errors.Is(err, urlevent.ErrFunctionError):
		return nil, 0, c.functionError(err.Error())
	case err != nil:
		return nil, 0, fmt.Errorf("peer %s: %w: %w", c.name, protocol.ErrBadResponse, err)
	}
	v, err := c.proto.ReadResponse(ctx, preq, ans.Status, ans.Header, int64(len(ans.Body)), bytes.NewReader(ans.Body))
	ttl := protocol.ResponseTTL(ans.Header)
	if err != nil {
		return nil, ttl, fmt.Errorf("peer %s: %w", c.name, err)
	}
	return v, ttl, nil
}

// invokeError maps an error of the Invoke call.
func (c *invokeClient) invokeError(err error) error {
	var tm *types.TooManyRequestsException
	var st interface{ HTTPStatusCode() int }
	if errors.As(err, &tm) || (errors.As(err, &st) && st.HTTPStatusCode() == http.StatusTooManyRequests) {
		pe := protocol.NewPeerError(http.StatusTooManyRequests, "", err.Error())
		return fmt.Errorf("peer %s: %w: %w", c.name, ErrThrottled, pe)
	}
	return fmt.Errorf("peer %s: %w", c.name, err)
}

func (c *invokeClient) functionError(msg string) error {
	pe := protocol.NewPeerError(http.StatusBadGateway, "", msg)
	return fmt.Errorf("peer %s: %w: %w", c.name, ErrFunctionError, pe)
}

// invokeEvent is the Function URL event (payload format 2.0) of a protocol
// request, as a Function URL would deliver it: rawPath escaped as sent.
func invokeEvent(r protocol.Request) *events.LambdaFunctionURLRequest {
	h := make(map[string]string, len(r.Header))
	for k, vs := range r.Header {
		h[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	path, err := url.PathUnescape(r.Path)
	if err != nil {
		path = r.Path
	}
	ev := &events.LambdaFunctionURLRequest{
		Version: "2.0",
		RawPath: r.Path,
		Headers: h,
		RequestContext: events.LambdaFunctionURLRequestContext{
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: r.Method, Path: path},
		},
	}
	if r.Body != nil { // a PUT: the value travels base64, as a Function URL sends binary bodies
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(r.Body), true
	}
	return ev
}
