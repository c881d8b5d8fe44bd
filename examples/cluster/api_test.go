//go:build !js

package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/internal/testkit"
)

// A query that does not parse (a bad escape such as %zz, or a lone %)
// gives a key all the same: the API answers 400 naming the malformed
// query, not "missing key parameter", for GET, many keys and DELETE.
func TestAPIMalformedQuery(t *testing.T) {
	api, db := startTestCluster(t, time.Millisecond)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for _, tc := range []struct{ method, query, fault string }{
		{http.MethodGet, "?key=%zz", `"%zz"`},
		{http.MethodGet, "?key=100%", `"%"`},
		{http.MethodGet, "?key=Tom&key=%zz", `"%zz"`},
		{http.MethodDelete, "?key=%zz", `"%zz"`},
		{http.MethodDelete, "?key=100%", `"%"`},
	} {
		req, err := http.NewRequest(tc.method, api+"/api"+tc.query, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(body, "malformed query") ||
			!strings.Contains(body, tc.fault) || strings.Contains(body, "missing key") {
			t.Errorf("%s /api%s = %d %q; want 400 \"malformed query\" naming %s", tc.method, tc.query, resp.StatusCode, body, tc.fault)
		}
	}
	if n := db.Lookups("Tom"); n != 0 {
		t.Errorf("Tom searched %d times; a malformed query must load nothing", n)
	}
}

// A long key is logged clipped: its first 64 bytes and its length, on the
// API's lines and the slow database's, never whole.
func TestLongKeyIsClippedInLogs(t *testing.T) {
	const shown = 64 // the bytes of a long key a log line shows
	var logs testkit.Buffer
	api, _ := startLoggedCluster(t, time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	long := strings.Repeat("k", 10<<10)
	if st, body := get(t, c, api+"/api?key="+long); st != http.StatusNotFound || body != long+" not exist\n" {
		t.Errorf("GET of a 10 KB key = %d (%d bytes); want 404, the key not exist", st, len(body))
	}
	if st, _ := get(t, c, api+"/api?key=Tom&key="+long); st != http.StatusOK {
		t.Errorf("GET of Tom and a 10 KB key = %d; want 200", st)
	}
	req, err := http.NewRequest(http.MethodDelete, api+"/api?key="+long, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("DELETE of a 10 KB key = %d; want 200", resp.StatusCode)
	}

	text := logs.String()
	if strings.Contains(text, strings.Repeat("k", shown+1)) {
		t.Errorf("a log line holds more than %d bytes of the key", shown)
	}
	for _, what := range []string{`msg="api request" key=`, `msg="[SlowDB] search key"`, `msg="api request" keys=`, `msg="api delete" key=`} {
		found := false
		for line := range strings.Lines(text) {
			if strings.Contains(line, what) && strings.Contains(line, strings.Repeat("k", shown)+"…(10240 bytes)") {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s line with the key's first %d bytes and its length:\n%.2000s", what, shown, text)
		}
	}
}
