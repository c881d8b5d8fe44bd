//go:build !js

package lambda

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/lambda/lambdatest"
)

// serveFront serves, on ln until the test ends, a Front that invokes the
// runtime endpoint; the cleanup checks that the server stopped cleanly.
func serveFront(t testing.TB, ln net.Listener, endpoint string, invokeTimeout time.Duration) {
	t.Helper()
	f, err := lambdatest.NewFront([]string{endpoint},
		&lambdatest.FrontOptions{InvokeTimeout: invokeTimeout, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("front shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("front: %v", err)
		}
		f.Close()
	})
}

// fakeRuntime serves fn as a runtime endpoint until the test ends.
func fakeRuntime(t testing.TB, fn func(ctx context.Context, payload []byte) ([]byte, error)) string {
	t.Helper()
	srv, ep := lambdatest.NewRuntime(fn)
	t.Cleanup(srv.Close)
	return ep
}
