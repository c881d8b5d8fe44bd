package picker

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
)

var errBadAddr = errors.New("bad address")

// lowerOnly is a Normalize that lower-cases an address and refuses one
// with a space.
func lowerOnly(s string) (string, error) {
	if strings.Contains(s, " ") {
		return "", errBadAddr
	}
	return strings.ToLower(s), nil
}

// Set normalises every address (and NewPeers self) with Options.Normalize,
// so two spellings of a node are one node; an invalid address makes Set
// return the error and keep the old list; and each change is logged to
// Options.Logger at Debug.
func TestPeersSetNormalizesChecksAndLogs(t *testing.T) {
	var buf bytes.Buffer
	debug := &slog.HandlerOptions{Level: slog.LevelDebug}
	p, err := NewPeers("A", nil, &Options{Normalize: lowerOnly, Logger: slog.New(slog.NewTextHandler(&buf, debug))})
	if err != nil {
		t.Fatal(err)
	}
	if p.Self() != "a" {
		t.Errorf("Self() = %q, want the normalised a", p.Self())
	}
	if err := p.Set("A", "B", "b", "C"); err != nil {
		t.Fatal(err)
	}
	if got := p.Addrs(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Addrs() = %q, want [a b c]", got)
	}
	if !strings.Contains(buf.String(), "peers set") || !strings.Contains(buf.String(), "[a b c]") {
		t.Errorf("log %q does not show the new list", buf.String())
	}
	if err := p.Set("a", "no such node"); !errors.Is(err, errBadAddr) {
		t.Fatalf("Set with an invalid address: %v, want its error", err)
	}
	if got := p.Addrs(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("after a failed Set, Addrs() = %q, want the old [a b c]", got)
	}
	if _, err := NewPeers("bad self", nil, &Options{Normalize: lowerOnly}); !errors.Is(err, errBadAddr) {
		t.Errorf("NewPeers with an invalid self: %v, want its error", err)
	}
	// Without Normalize, addresses are taken as given.
	q := mustPeers("", nil, nil)
	if err := q.Set("A", "a"); err != nil {
		t.Fatal(err)
	}
	if got := q.Addrs(); !slices.Equal(got, []string{"A", "a"}) {
		t.Errorf("no Normalize: Addrs() = %q, want [A a]", got)
	}
	var _ cache.PeerPicker = p
}
