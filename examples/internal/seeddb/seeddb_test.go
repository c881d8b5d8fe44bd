package seeddb_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/geecache/geecache/examples/internal/seeddb"
	"github.com/geecache/geecache/getter"
)

func TestLookupsAndNotFound(t *testing.T) {
	db := seeddb.New(seeddb.Scores(), 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := db.Getter("n1")
	if v, err := g.Get(t.Context(), "Tom"); err != nil || string(v) != "630" {
		t.Fatalf("Tom = %q, %v", v, err)
	}
	_, err := g.Get(t.Context(), "kkk")
	if !errors.Is(err, getter.ErrNotFound) || err.Error() != "kkk not exist: key not found" {
		t.Fatalf("kkk err = %v", err)
	}
	if db.Lookups("Tom") != 1 || db.Lookups("kkk") != 1 || db.Lookups("Sam") != 0 {
		t.Fatal("lookup counts wrong")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := seeddb.New(seeddb.Scores(), 1<<40, slog.Default()).Getter("n").Get(ctx, "Tom"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled lookup err = %v", err)
	}
}

func ExampleDB() {
	db := seeddb.New(seeddb.Scores(), 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	v, _ := db.Getter("node-1").Get(context.Background(), "Jack")
	fmt.Println(string(v), db.Lookups("Jack"))
	// Output: 589 1
}
