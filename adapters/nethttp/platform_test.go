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
