package lambda

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// serveFront serves, on ln until the test ends, a Front that invokes the
// runtime endpoint; the cleanup checks that the server stopped cleanly.
func serveFront(t testing.TB, ln net.Listener, endpoint string, invokeTimeout time.Duration) {
	t.Helper()
	f, err := NewFront([]string{endpoint},
		WithInvokeTimeout(invokeTimeout), WithFrontLogger(slog.New(slog.DiscardHandler)))
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
