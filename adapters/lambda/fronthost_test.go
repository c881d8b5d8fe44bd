//go:build !js

package lambda

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// A Front reached under a host name that is not a loopback address (the
// service name of a container, "cache-b:8001", as peers in Docker Compose
// call it) stands in for a Function URL all the same: its events carry
// rawPath escaped as sent, so every key is served as itself, never read
// as an API Gateway event's decoded path (where "a%2Fb" would be the key
// "a%2Fb" and "!." would be refused).
func TestFrontUnderAHostNameServesEveryKeyAsItself(t *testing.T) {
	h := echoHandler(t, "")
	ep := fakeRuntime(t, awslambda.NewHandler(h.ServeURL).Invoke)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveFront(t, ln, ep, 10*time.Second)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, key := range []string{"Tom", "a/b", "a%2Fb", "100%", "sp ace", "!.", "."} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+protocol.Path("g", key), nil)
		req.Host = "cache-b:8001"
		res, err := client.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		if res.StatusCode != 200 || string(body) != "key="+key {
			t.Errorf("key %q through a front called cache-b:8001: %d %q, want 200 %q", key, res.StatusCode, body, "key="+key)
		}
	}
}
