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
	if rt != nil || platformReachesPeers {
		return nil
	}
	return fmt.Errorf("geecache: %w: this platform cannot reach peers over the network (GOOS=%s): give the Pool a Transport the host provides, or run the groups in one process", cache.ErrConfig, runtime.GOOS)
}
