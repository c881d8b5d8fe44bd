// Package urlevent decodes what a Lambda function returns to a Function
// URL invocation, in both invoke modes, for the two callers that read it:
// the Invoke API peer client of package lambda and the local Function URL
// stand-in of package lambdatest.
package urlevent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Errors of Decode.
var (
	// ErrFunctionError: the function returned an error instead of a
	// response ({"errorMessage", "errorType"}).
	ErrFunctionError = errors.New("function error")
	// ErrBadResponse: the payload is not a valid Function URL response.
	ErrBadResponse = errors.New("invalid invoke response")
)

// streamDelimiter separates the JSON prelude of a RESPONSE_STREAM answer
// from its raw body.
var streamDelimiter = []byte{0, 0, 0, 0, 0, 0, 0, 0}

// An Answer is a decoded Function URL response.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	// Streamed is true for a RESPONSE_STREAM answer (prelude, 8 NUL
	// bytes, raw body).
	Streamed bool
}

// result is a BUFFERED response, a stream's prelude, or a function error.
type result struct {
	StatusCode      *int              `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
	Cookies         []string          `json:"cookies"`
	ErrorMessage    *string           `json:"errorMessage"`
	ErrorType       string            `json:"errorType"`
}

// Decode turns a function's invoke payload into HTTP, as a Function URL
// does: a BUFFERED response object (body base64 if IsBase64Encoded), a
// RESPONSE_STREAM answer (a JSON prelude with status and headers, 8 NUL
// bytes, then the raw body), or any other JSON value, which a Function URL
// serves as a 200 with that JSON as its body. A function error yields
// ErrFunctionError, anything else malformed ErrBadResponse.
func Decode(raw []byte) (*Answer, error) {
	if len(raw) == 0 || raw[0] != '{' {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%w: not JSON: %.200q", ErrBadResponse, raw)
		}
		return jsonBody(raw), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var res result
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	rest := raw[dec.InputOffset():]
	streamed := bytes.HasPrefix(rest, streamDelimiter)
	if !streamed && len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("%w: %d bytes after the response object", ErrBadResponse, len(rest))
	}
	if res.StatusCode == nil {
		if res.ErrorMessage != nil {
			return nil, fmt.Errorf("%w: %s: %s", ErrFunctionError, res.ErrorType, *res.ErrorMessage)
		}
		if streamed {
			return nil, fmt.Errorf("%w: stream prelude without statusCode", ErrBadResponse)
		}
		return jsonBody(raw), nil
	}
	if *res.StatusCode < 100 || *res.StatusCode > 599 {
		return nil, fmt.Errorf("%w: status code %d", ErrBadResponse, *res.StatusCode)
	}
	a := &Answer{Status: *res.StatusCode, Header: make(http.Header, len(res.Headers)+1), Streamed: streamed}
	for k, v := range res.Headers {
		a.Header.Set(k, v)
	}
	for _, c := range res.Cookies {
		a.Header.Add("Set-Cookie", c)
	}
	switch {
	case streamed:
		a.Body = rest[len(streamDelimiter):]
	case res.IsBase64Encoded:
		b, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: body: %v", ErrBadResponse, err)
		}
		a.Body = b
	default:
		a.Body = []byte(res.Body)
	}
	return a, nil
}

// jsonBody is the answer for a payload that is not a response object.
func jsonBody(raw []byte) *Answer {
	h := http.Header{"Content-Type": {"application/json"}}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return &Answer{Status: http.StatusOK, Header: h, Body: []byte(s)}
	}
	return &Answer{Status: http.StatusOK, Header: h, Body: raw}
}
