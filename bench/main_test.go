package bench

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(gcNodeEnv); spec != "" {
		os.Exit(runGCNode(spec)) // a groupcache node of BenchmarkRemoteFetch
	}
	code := m.Run()
	stopGroupcache()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
