//go:build !js

package lambda

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Options.ShowErrors: by default a Lambda node sends a caller that did not
// sign its request a generic message ("load failed", "key not found"), not
// its source's error text, since a Function URL may be reachable by anyone
// (docs/reads.md, "Errors", PROTOCOL.md's HideErrors); with ShowErrors the
// detail goes back. This test needs no runtime emulator, so it always runs.
func TestNodeShowErrors(t *testing.T) {
	const detail = "db at 10.1.2.3:5432 refused: password expired"
	setup := func(_ Config, reg *cache.Registry, peers cache.PeerPicker) error {
		_, err := reg.NewGroup("scores", 1<<20, getter.Func(func(context.Context, string) ([]byte, error) {
			return nil, errors.New(detail)
		}), &cache.GroupOptions{Peers: peers, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
		return err
	}
	for _, show := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := Config{SelfURL: "node-a", Peers: []string{"node-a"}}
			n, err := NewNode(cfg, setup, &Options{Logger: slog.New(slog.DiscardHandler), ShowErrors: show})
			if err != nil {
				t.Fatal(err)
			}
			for _, marked := range []bool{false, true} { // a peer header proves nothing without a secret
				hdr := http.Header{}
				if marked {
					hdr.Set("X-Geecache-Peer", "1")
				}
				res := serveEvent(t, n, "/_geecache/scores/k", hdr)
				if res.StatusCode != http.StatusInternalServerError {
					t.Fatalf("ShowErrors %v: a failed load answered %d; want 500", show, res.StatusCode)
				}
				body := res.Body
				if res.IsBase64Encoded {
					b, _ := base64.StdEncoding.DecodeString(body)
					body = string(b)
				}
				if got := strings.Contains(body, detail); got != show {
					t.Errorf("ShowErrors %v, peer header %v: the unsigned caller got %q", show, marked, body)
				}
			}
			time.Sleep(time.Second) // the load's worker ends after 100 ms idle
		})
	}
}
