//go:build linux

package lambda

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// serveGate serves, on ln until the test ends, the invoke endpoint of the
// emulator at addr to all its callers (its front, and its peers' Lambda
// API clients): one invoke at a time, as one execution environment takes
// them, each passed on to its end even if its caller leaves (the function
// runs to its end anyway), so that the emulator, which crashes on
// overlapping invokes, never gets two. Its callers are told the gate's
// address, which the test holds from the start.
func serveGate(t testing.TB, ln net.Listener, addr string) {
	t.Helper()
	turn := make(chan struct{}, 1)
	hc := &http.Client{Transport: &http.Transport{Proxy: nil, DisableCompression: true}}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxPayloadBytes+1))
		if err != nil {
			return
		}
		select {
		case turn <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, r.Method, "http://"+addr+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			<-turn
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		res, err := hc.Do(req)
		var out []byte
		if err == nil {
			out, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		<-turn // the emulator has answered: its next invoke may go
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(out)
	})}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		hc.CloseIdleConnections()
	})
}
