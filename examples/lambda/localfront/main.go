// Command localfront serves a local Lambda runtime, such as aws-lambda-rie
// running examples/lambda, as a Function URL would: plain HTTP in, a
// Function URL event to the runtime's invoke endpoint, the function's
// response back as HTTP. It is for running Lambda nodes on one machine.
//
//	go run ./examples/lambda/localfront -listen 127.0.0.1:8001 -invoke http://127.0.0.1:9001
//
// Several -invoke URLs (comma-separated) make one node of several
// execution environments, as Lambda runs under concurrent load.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/geecache/geecache/adapters/lambda/lambdatest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8001", "address to serve the Function URL on")
	invoke := flag.String("invoke", "http://127.0.0.1:9001", "comma-separated base URLs of runtime emulators (the invoke path is added)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, strings.Split(*invoke, ","), log); err != nil {
		log.Error("localfront", "err", err)
		stop()
		os.Exit(1)
	}
}

// run serves until ctx ends, then shuts the server down.
func run(ctx context.Context, listen string, bases []string, log *slog.Logger) error {
	var endpoints []string
	for _, b := range bases {
		endpoints = append(endpoints, strings.TrimSpace(b)) // NewFront adds the invoke path
	}
	front, err := lambdatest.NewFront(endpoints, &lambdatest.FrontOptions{Logger: log})
	if err != nil {
		return err
	}
	defer front.Close()
	srv := &http.Server{Addr: listen, Handler: front, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("function URL front", "listen", "http://"+listen, "invoke", endpoints)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
