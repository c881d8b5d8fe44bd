package getter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/geecache/geecache/getter"
)

func TestMap(t *testing.T) {
	m := map[string]string{"Tom": "630"}
	g := getter.Map(m)
	m["Tom"] = "changed" // Map copied its input
	if v, err := g.Get(t.Context(), "Tom"); err != nil || string(v) != "630" {
		t.Fatalf("Get(Tom) = %q, %v", v, err)
	}
	if _, err := g.Get(t.Context(), "kkk"); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(kkk) err = %v, want ErrNotFound", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := g.Get(ctx, "Tom"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Get err = %v", err)
	}
}

func ExampleFunc() {
	slowDB := map[string]string{"Tom": "630"}
	g := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		if v, ok := slowDB[key]; ok {
			return []byte(v), nil
		}
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	})
	v, _ := g.Get(context.Background(), "Tom")
	_, err := g.Get(context.Background(), "kkk")
	fmt.Println(string(v), errors.Is(err, getter.ErrNotFound))
	// Output: 630 true
}

func ExampleTTLFunc() {
	prices := getter.TTLFunc(func(ctx context.Context, key string) ([]byte, time.Duration, error) {
		// Prices change; each is fresh for a minute.
		return []byte("42.00"), time.Minute, nil
	})
	var g getter.Getter = prices // a TTLFunc is a Getter too
	v, _ := g.Get(context.Background(), "AAPL")
	_, ttl, _ := prices.GetTTL(context.Background(), "AAPL")
	fmt.Println(string(v), ttl)
	// Output: 42.00 1m0s
}
