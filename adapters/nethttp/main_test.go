package nethttp

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions()...) }

func mustClient(t testing.TB, addr string, o *ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(addr, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
