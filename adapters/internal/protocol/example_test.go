package protocol_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A binding moves a Request from a Client to a Server and the Response back;
// here the "transport" is a function call.
func Example() {
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), nil); err != nil {
		fmt.Println(err)
		return
	}
	secret := []byte("shared by all nodes")
	const self = "http://10.0.0.2:8001" // the serving node's base URL
	server, err := protocol.NewServer(reg, &protocol.ServerOptions{Secret: secret, Self: self})
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		fmt.Println(err)
		return
	}

	for _, key := range []string{"Tom", "kkk"} {
		req := client.NewRequest(context.Background(), self, "scores", key, false)
		resp := server.Serve(context.Background(), req)
		v, err := client.ReadResponse(context.Background(), req, resp.Status, resp.Header, int64(resp.Len()), resp.Reader())
		fmt.Printf("%s %d %q %q not found: %v\n", req.Path, resp.Status, resp.Code(), v, errors.Is(err, getter.ErrNotFound))
	}
	// Output:
	// /_geecache/scores/Tom 200 "" "630" not found: false
	// /_geecache/scores/kkk 404 "not_found" "" not found: true
}

func ExamplePath() {
	fmt.Println(protocol.Path("my group", "a/b?c#d%"))
	fmt.Println(protocol.ParsePath("/_geecache/my%20group/a%2Fb%3Fc%23d%25"))
	// Output:
	// /_geecache/my%20group/a%2Fb%3Fc%23d%25
	// my group a/b?c#d% <nil>
}
