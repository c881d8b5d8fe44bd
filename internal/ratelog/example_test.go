package ratelog_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/geecache/geecache/internal/ratelog"
)

func ExampleLimiter_Log() {
	now := time.Unix(0, 0)
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	l := ratelog.New(log, time.Second, func() time.Time { return now })
	for range 100 {
		l.Log(context.Background(), slog.LevelWarn, "peer x", "peer failed")
		now = now.Add(20 * time.Millisecond)
	}
	// Output:
	// level=WARN msg="peer failed"
	// level=WARN msg="peer failed" suppressed=49
}
