//go:build !js

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// alone is a PeerPicker for a node without peers: it owns every key.
type alone struct{}

func (alone) PickPeer(string) (cache.Peer, bool) { return nil, false }

// The node's groups answer the tutorial's queries.
func Example() {
	reg := cache.NewRegistry()
	if err := addGroups(reg, lambda.Config{SelfURL: "geecache-a", CacheBytes: 1 << 20}, alone{}, slog.New(slog.DiscardHandler)); err != nil {
		panic(err)
	}
	ctx := context.Background()
	v, err := reg.Lookup("scores").Get(ctx, "Tom")
	fmt.Println(v.String(), err)
	_, err = reg.Lookup("scores").Get(ctx, "kkk")
	fmt.Println(errors.Is(err, getter.ErrNotFound))
	b, _ := reg.Lookup("blobs").Get(ctx, "all-bytes")
	all := b.ByteSlice()
	fmt.Println(b.Len(), all[0], all[255])
	// Output:
	// 630 <nil>
	// true
	// 256 0 255
}

// Each node's loads are logged with the node's own name, qualified as its
// peers invoke it, for a present and a missing key of each group.
func TestLoadsLogTheNode(t *testing.T) {
	for _, tc := range []struct {
		cfg  lambda.Config
		want string
	}{
		{lambda.Config{SelfURL: "geecache-b"}, "geecache-b"},
		{lambda.Config{SelfURL: "geecache-b", Qualifier: "live"}, "geecache-b:live"},
		{lambda.Config{SelfURL: "geecache-b:v2", Qualifier: "live"}, "geecache-b:v2"},
		{lambda.Config{SelfURL: "arn:aws:lambda:eu-west-1:123456789012:function:geecache-b", Qualifier: "live"},
			"arn:aws:lambda:eu-west-1:123456789012:function:geecache-b:live"},
		{lambda.Config{SelfURL: "https://b.lambda-url.eu-west-1.on.aws", Qualifier: "live"}, "https://b.lambda-url.eu-west-1.on.aws"},
	} {
		var buf bytes.Buffer
		tc.cfg.CacheBytes = 1 << 20
		reg := cache.NewRegistry()
		if err := addGroups(reg, tc.cfg, alone{}, slog.New(slog.NewJSONHandler(&buf, nil))); err != nil {
			t.Fatal(err)
		}
		for _, q := range [][2]string{{"scores", "Tom"}, {"scores", "kkk"}, {"blobs", "all-bytes"}, {"blobs", "none"}} {
			buf.Reset()
			_, _ = reg.Lookup(q[0]).Get(context.Background(), q[1])
			var nodes []string
			for line := range strings.Lines(buf.String()) {
				var rec struct{ Msg, Node, Key string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if rec.Msg == "[SlowDB] search key" && rec.Key == q[1] {
					nodes = append(nodes, rec.Node)
				}
			}
			if len(nodes) != 1 || nodes[0] != tc.want {
				t.Errorf("%+v: load of %s/%s logged nodes %q; want [%q]\n%s", tc.cfg, q[0], q[1], nodes, tc.want, buf.String())
			}
		}
	}
}
