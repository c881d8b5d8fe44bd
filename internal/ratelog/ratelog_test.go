package ratelog

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestOneLinePerKindPerInterval(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	l := New(slog.New(slog.NewTextHandler(&buf, nil)), time.Second, func() time.Time { return now })
	ctx := context.Background()
	for i := range 5718 { // a peer outage: one failure per load
		now = now.Add(7 * time.Second / 5718)
		l.Log(ctx, slog.LevelWarn, "peer a", "peer failed", slog.Int("i", i))
		l.Log(ctx, slog.LevelWarn, "peer b", "peer failed")
	}
	lines := strings.Count(buf.String(), "\n")
	if lines < 14 || lines > 16 { // 7 s, 2 kinds, one line a second each
		t.Fatalf("%d lines for 7 s of two failing peers, want about 14:\n%s", lines, buf.String())
	}
	if !strings.Contains(buf.String(), "suppressed=") {
		t.Fatal("no line says how many were suppressed")
	}
}

func TestKindsAreBounded(t *testing.T) {
	l := New(slog.New(slog.DiscardHandler), time.Second, nil)
	for i := range 3 * maxKinds {
		l.Log(context.Background(), slog.LevelWarn, strings.Repeat("k", i%50)+string(rune(i)), "m")
	}
	if len(l.kinds) > maxKinds {
		t.Fatalf("%d kinds remembered, want at most %d", len(l.kinds), maxKinds)
	}
}
