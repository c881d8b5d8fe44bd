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
			AccountID:    "anonymous",
			RequestID:    requestID(),
			APIID:        "local",
			DomainName:   r.Host,
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

// httpAnswer is a decoded Function URL response.
type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

// urlResult is what a runtime returns for an invoke: a Function URL
// response, a function error, or (as a Function URL allows) any other JSON
// value, which becomes a 200 with that JSON as its body.
type urlResult struct {
	StatusCode      *int              `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
	Cookies         []string          `json:"cookies"`
	ErrorMessage    *string           `json:"errorMessage"`
	ErrorType       string            `json:"errorType"`
}

// decodeURLResponse turns a runtime's answer into HTTP, as a Function URL
// does in BUFFERED mode.
func decodeURLResponse(raw []byte) (*httpAnswer, error) {
	var res urlResult
	if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadInvokeResponse, err)
		}
	} else if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: not JSON: %.200q", ErrBadInvokeResponse, raw)
	}
	if res.StatusCode == nil {
		if res.ErrorMessage != nil {
			return nil, fmt.Errorf("%w: %s: %s", ErrFunctionError, res.ErrorType, *res.ErrorMessage)
		}
		// Not a response object: the JSON value itself is the body.
		h := http.Header{"Content-Type": {"application/json"}}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return &httpAnswer{status: http.StatusOK, header: h, body: []byte(s)}, nil
		}
		return &httpAnswer{status: http.StatusOK, header: h, body: raw}, nil
	}
	if *res.StatusCode < 100 || *res.StatusCode > 599 {
		return nil, fmt.Errorf("%w: status code %d", ErrBadInvokeResponse, *res.StatusCode)
	}
	a := &httpAnswer{status: *res.StatusCode, header: make(http.Header, len(res.Headers)+1)}
	for k, v := range res.Headers {
		a.header.Set(k, v)
	}
	for _, c := range res.Cookies {
		a.header.Add("Set-Cookie", c)
	}
	if res.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: body: %v", ErrBadInvokeResponse, err)
		}
		a.body = b
	} else {
		a.body = []byte(res.Body)
	}
	return a, nil
}
