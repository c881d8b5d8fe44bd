//go:build !js

package nethttp

import (
	"fmt"
	"net/http"
	"runtime"

	"github.com/geecache/geecache/cache"
)

// checkPlatform returns an error wrapping cache.ErrConfig if rt (the
// transport given in the options, nil for the default) cannot reach peers
// on this platform: under GOOS=wasip1 a module cannot open sockets (WASI
// preview 1 has no connect), so only a RoundTripper the host provides
// (ClientOptions.Transport or PoolOptions.Transport) can reach peers. A
// transport the caller gives is trusted: it may call out to the host.
func checkPlatform(rt http.RoundTripper) error {
	if rt != nil || runtime.GOOS != "wasip1" {
		return nil
	}
	return fmt.Errorf("geecache: %w: this platform cannot reach peers over the network (GOOS=%s): give the Pool a Transport the host provides, or run the groups in one process", cache.ErrConfig, runtime.GOOS)
}

// checkListen returns an error wrapping cache.ErrConfig where net.Listen
// cannot give a server its peers: under GOOS=js and GOOS=wasip1 its
// listeners are an in-process fake that nothing outside the program
// reaches, so a node would start and never be asked (and, under js, die
// with "all goroutines are asleep"). ListenAndServe calls it first. Serve
// takes any listener: an in-process one is the caller's choice.
func checkListen() error {
	switch runtime.GOOS {
	case "js":
		return fmt.Errorf("geecache: %w: net/http cannot listen under GOOS=js (its listeners are an in-process fake): the JavaScript host listens and calls the node through package adapters/wasmjs", cache.ErrConfig)
	case "wasip1":
		return fmt.Errorf("geecache: %w: a module cannot listen under GOOS=wasip1 (no sockets): the host must serve it", cache.ErrConfig)
	}
	return nil
}
