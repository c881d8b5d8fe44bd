//go:build !js

package lambda

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
)

// maxValueBytes is the largest value a BUFFERED Function URL response can
// carry: the response JSON is limited to maxPayloadBytes (6 MiB), and the
// value travels base64 (4 bytes for 3), with room left for the status and
// headers. Past the limit the runtime would cut the payload off silently;
// a node answers 413 instead.
const maxValueBytes = (maxPayloadBytes - responseOverhead) / 4 * 3

// maxPayloadBytes is the largest request or response payload (the whole
// event or response JSON) that Lambda accepts in BUFFERED mode: 6 MiB.
const maxPayloadBytes = 6 << 20

// maxStreamPayloadBytes is the largest response a function may stream in
// RESPONSE_STREAM mode: 200 MB, Lambda's documented maximum for streamed
// responses (https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html;
// the first 6 MB stream at full speed, the rest at up to 2 MB/s).
const maxStreamPayloadBytes = 200_000_000

// maxStreamValueBytes is the largest value a node serves in RESPONSE_STREAM
// mode: the value streams raw, after a prelude of status and headers.
// Peers that fetch through the Invoke API still get at most a synchronous
// payload (6 MB); a larger value makes them load it themselves.
const maxStreamValueBytes = maxStreamPayloadBytes - responseOverhead

// responseOverhead bounds the JSON of a response without its body.
const responseOverhead = 8 << 10

// A handler serves the GeeCache peer protocol to AWS Lambda Function URL
// events (payload format 2.0), whether they come from a Function URL, from
// a peer through the Invoke API, or from an API Gateway HTTP API (see
// Config.Cluster.BasePath). It only moves requests and responses
// between the Lambda event format and a protocol.Server, which does the
// protocol's work (paths, status codes, authentication, size limit),
// exactly as for the net/http binding.
type handler struct {
	srv  *protocol.Server
	base string
}

// newHandler returns a handler that answers with srv, removing base (see
// protocolPath) from request paths. Give srv a size limit
// (protocol.ServerOptions.MaxValueBytes) of at most maxValueBytes (or
// maxStreamValueBytes for ServeStream), so that a large value is refused
// with the protocol's 413 before it is copied; the handler refuses a
// response that would still not fit. It fails, with an error wrapping
// cache.ErrConfig, for a base path that cannot work.
func newHandler(srv *protocol.Server, base string) (*handler, error) {
	if err := peerhttp.CheckBasePath(base); err != nil {
		return nil, err
	}
	return &handler{srv: srv, base: base}, nil
}

// ServeURL answers a Function URL request in BUFFERED mode (a Function URL's
// default InvokeMode). The body of the response is always base64 with
// IsBase64Encoded set, so that any bytes survive. It never returns an
// error: protocol errors are HTTP statuses, as on every binding.
func (h *handler) ServeURL(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLResponse, error) {
	req, res := h.serve(ctx, ev)
	if n := base64.StdEncoding.EncodedLen(res.Len()); n > maxPayloadBytes-responseOverhead {
		res = h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeTooLarge, fmt.Sprintf(
			"response of %d bytes does not fit a Lambda response (at most %d bytes of value)", res.Len(), maxValueBytes)))
	}
	out := &events.LambdaFunctionURLResponse{
		StatusCode:      res.Status,
		Headers:         flatten(res.Header),
		Body:            encodeBody(res),
		IsBase64Encoded: true,
	}
	return out, nil
}

// encodeBody returns res's body in base64, encoded straight from the
// cached value into the string it returns (no copy of the value, no
// intermediate buffer).
func encodeBody(res protocol.Response) string {
	var sb strings.Builder
	sb.Grow(base64.StdEncoding.EncodedLen(res.Len()))
	enc := base64.NewEncoder(base64.StdEncoding, &sb)
	_, _ = res.WriteTo(enc) // a strings.Builder does not fail
	_ = enc.Close()
	return sb.String()
}

// ServeStream answers a Function URL request in RESPONSE_STREAM mode, for
// URLs configured with that InvokeMode (the function must be built with
// -tags lambda.norpc or run on a provided.* runtime). The body is sent raw
// after the Function URL's JSON prelude; a value over maxStreamValueBytes
// is refused with 413 rather than cut off.
func (h *handler) ServeStream(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	req, res := h.serve(ctx, ev)
	if res.Len() > maxStreamValueBytes {
		res = h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeTooLarge, fmt.Sprintf(
			"response of %d bytes does not fit a streamed Lambda response (at most %d bytes of value)", res.Len(), maxStreamValueBytes)))
	}
	return &events.LambdaFunctionURLStreamingResponse{
		StatusCode: res.Status,
		Headers:    flatten(res.Header),
		Body:       res.Reader(),
	}, nil
}

// serve decodes ev into a protocol request and answers it, with a sealed
// response (see protocol.Server.Seal).
func (h *handler) serve(ctx context.Context, ev *events.LambdaFunctionURLRequest) (protocol.Request, protocol.Response) {
	if ev == nil {
		// An invoke whose payload is the JSON null: an event without a
		// path, refused (400) like any other. A panic would make the
		// runtime loop end the execution environment and its cache.
		ev = &events.LambdaFunctionURLRequest{}
	}
	hdr := make(http.Header, len(ev.Headers))
	for k, v := range ev.Headers {
		hdr.Set(k, v)
	}
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		method = http.MethodGet // a bare test event from the console
	}
	path, err := h.protocolPath(ev)
	req := protocol.Request{Method: method, Path: path, Header: hdr}
	if err != nil {
		return req, h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeBadRequest, err.Error()))
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded && ev.Body != "" {
		// A Function URL encodes every body it does not take for text; a
		// request whose body does not decode is malformed.
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return req, h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeBadRequest,
				"request body is flagged base64 but does not decode: "+err.Error()))
		}
		body = b
	}
	if method == http.MethodPut || method == http.MethodPost {
		req.Body = body // a peer's Set or batch; other requests have no body
	}
	return req, h.srv.Serve(ctx, req)
}

// flatten turns a protocol header into a Function URL header map.
func flatten(h http.Header) map[string]string {
	m := make(map[string]string, len(h))
	for k, vs := range h {
		m[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	return m
}
