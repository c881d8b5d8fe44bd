package urlevent

import (
	"errors"
	"testing"
)

func TestDecode(t *testing.T) {
	nul8 := "\x00\x00\x00\x00\x00\x00\x00\x00"
	cases := []struct {
		name, raw string
		status    int
		body      string
		streamed  bool
		err       error
	}{
		{"buffered base64", `{"statusCode":200,"headers":{"x-a":"1"},"body":"AP8=","isBase64Encoded":true}`, 200, "\x00\xff", false, nil},
		{"buffered text", `{"statusCode":404,"body":"kkk not exist"}`, 404, "kkk not exist", false, nil},
		{"stream", `{"statusCode":200,"headers":{"x-a":"1"}}` + nul8 + "raw\x00body", 200, "raw\x00body", true, nil},
		{"stream empty body", `{"statusCode":204}` + nul8, 204, "", true, nil},
		{"json value", `"hi"`, 200, "hi", false, nil},
		{"json object without status", `{"a":1}`, 200, `{"a":1}`, false, nil},
		{"function error", `{"errorMessage":"boom","errorType":"errorString"}`, 0, "", false, ErrFunctionError},
		{"not json", `<html>`, 0, "", false, ErrBadResponse},
		{"bad base64", `{"statusCode":200,"body":"!","isBase64Encoded":true}`, 0, "", false, ErrBadResponse},
		{"bad status", `{"statusCode":99}`, 0, "", false, ErrBadResponse},
		{"short delimiter", `{"statusCode":200}` + "\x00\x00\x00x", 0, "", false, ErrBadResponse},
		{"stream without status", `{"headers":{}}` + nul8 + "x", 0, "", false, ErrBadResponse},
	}
	for _, tc := range cases {
		a, err := Decode([]byte(tc.raw))
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || a.Status != tc.status || string(a.Body) != tc.body || a.Streamed != tc.streamed {
			t.Errorf("%s: %+v, %v", tc.name, a, err)
		}
	}
	a, _ := Decode([]byte(`{"statusCode":200,"headers":{"x-a":"1"},"cookies":["c=1"]}`))
	if a.Header.Get("X-A") != "1" || a.Header.Get("Set-Cookie") != "c=1" {
		t.Errorf("headers %v", a.Header)
	}
}
