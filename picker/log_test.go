package picker

import (
	"bytes"
	"log/slog"
	"testing"
)

// A change of the peer list is routine: Set logs it at Debug, so a logger
// at Info (Options.Logger, or slog.Default() when it is nil) receives
// nothing from NewPeers and Set.
func TestSetLogsNothingAtInfo(t *testing.T) {
	var given bytes.Buffer
	info := slog.New(slog.NewTextHandler(&given, &slog.HandlerOptions{Level: slog.LevelInfo}))
	p, err := NewPeers("a", nil, &Options{Logger: info})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Set("a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	if given.Len() != 0 {
		t.Errorf("Options.Logger at Info got %q; want nothing", given.String())
	}

	var dflt bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&dflt, &slog.HandlerOptions{Level: slog.LevelInfo})))
	t.Cleanup(func() { slog.SetDefault(old) })
	p, err = NewPeers("a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Set("a", "b"); err != nil {
		t.Fatal(err)
	}
	if dflt.Len() != 0 {
		t.Errorf("slog.Default() at Info got %q; want nothing", dflt.String())
	}
}
