//go:build !js

package workers

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/examples/internal/hosttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startWorkerd runs config of this folder under workerd (hosttest.StartWorkerd).
func startWorkerd(t *testing.T, config string, files []string, env func(url string) []string) *hosttest.Proc {
	t.Helper()
	return hosttest.StartWorkerd(t, ".", config, files, env)
}
