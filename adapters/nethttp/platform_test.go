package nethttp

import (
	"errors"
	"net/http"
	"runtime"
	"testing"
)

func TestCheckPlatform(t *testing.T) {
	err := checkPlatform(nil)
	if runtime.GOOS == "wasip1" {
		if !errors.Is(err, ErrNoPeerNetwork) {
			t.Errorf("wasip1, default transport: %v; want ErrNoPeerNetwork", err)
		}
	} else if err != nil {
		t.Errorf("%s, default transport: %v; want nil", runtime.GOOS, err)
	}
	if err := checkPlatform(http.DefaultTransport); err != nil {
		t.Errorf("a transport given by the caller: %v; want nil", err)
	}
}
