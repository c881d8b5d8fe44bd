package lambdatest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// localDomain is the requestContext.domainName of a Front's events: a
// Function URL's domain, <url-id>.lambda-url.<region>.on.aws.
const localDomain = "local.lambda-url.local.on.aws"

// encodeURLRequest turns r (whose body has been read into body) into the
// JSON event a Function URL sends in BUFFERED mode.
func encodeURLRequest(r *http.Request, body []byte) ([]byte, error) {
	now := time.Now()
	ev := events.LambdaFunctionURLRequest{
		Version:        "2.0",
		RawPath:        r.URL.EscapedPath(),
		RawQueryString: r.URL.RawQuery,
		Headers:        make(map[string]string, len(r.Header)),
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID: "anonymous",
			RequestID: requestID(),
			APIID:     "local",
			// A Function URL's own domain, whatever host the client
			// asked for (its Host header is in the headers): an event
			// with another domain reads as an API Gateway event, whose
			// rawPath is decoded, and the node would serve a key with an
			// escaped byte as another key.
			DomainName:   localDomain,
			DomainPrefix: "local",
			Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  sourceIP(r.RemoteAddr),
				UserAgent: r.UserAgent(),
			},
		},
	}
	for k, vs := range r.Header {
		if k == "Cookie" {
			for _, v := range vs {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						ev.Cookies = append(ev.Cookies, c)
					}
				}
			}
			continue
		}
		ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	if r.Host != "" {
		ev.Headers["host"] = r.Host
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = make(map[string]string, len(q))
		for k, vs := range q {
			ev.QueryStringParameters[k] = strings.Join(vs, ",")
		}
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encoding event: %w", err)
	}
	return b, nil
}

// isText reports whether a Function URL would pass a body of this content
// type as text rather than base64.
func isText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/x-www-form-urlencoded",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}

func sourceIP(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
