//go:build !js

package nethttp

import (
	"errors"
	"net/http"
	"runtime"
	"testing"

	"github.com/geecache/geecache/cache"
)

func TestCheckPlatform(t *testing.T) {
	err := checkPlatform(nil)
	if runtime.GOOS == "wasip1" {
		if !errors.Is(err, cache.ErrConfig) {
			t.Errorf("wasip1, default transport: %v; want cache.ErrConfig", err)
		}
	} else if err != nil {
		t.Errorf("%s, default transport: %v; want nil", runtime.GOOS, err)
	}
	if err := checkPlatform(http.DefaultTransport); err != nil {
		t.Errorf("a transport given by the caller: %v; want nil", err)
	}
}

// Under js and wasip1 a Server's ListenAndServe says at once that nothing
// can reach it there, instead of serving an in-process fake listener.
func TestCheckPlatformListen(t *testing.T) {
	switch runtime.GOOS {
	case "js", "wasip1":
		if err := NewServer("127.0.0.1:0", http.NotFoundHandler(), nil).ListenAndServe(); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%s: ListenAndServe = %v; want cache.ErrConfig", runtime.GOOS, err)
		}
		if err := NewServer("127.0.0.1:0", http.NotFoundHandler(), nil).ListenAndServeTLS("c", "k"); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%s: ListenAndServeTLS = %v; want cache.ErrConfig", runtime.GOOS, err)
		}
	default:
		if err := checkListen(); err != nil {
			t.Errorf("%s: checkListen = %v; want nil", runtime.GOOS, err)
		}
	}
}
