package dns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// fakeDNS is a source whose answer the test changes; it records when it
// was asked (virtual time inside a bubble).
type fakeDNS struct {
	mu    sync.Mutex
	addrs []string
	err   error
	asked []time.Time
}

func (f *fakeDNS) lookup(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, time.Now())
	return slices.Clone(f.addrs), f.err
}

func (f *fakeDNS) set(err error, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addrs, f.err = addrs, err
}

// recorder is a real picker.Peers that remembers when each Set came.
type recorder struct {
	*picker.Peers
	mu   sync.Mutex
	sets []time.Time
	fail error
}

func (r *recorder) Set(addrs ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.sets = append(r.sets, time.Now())
	return r.Peers.Set(addrs...)
}

func (r *recorder) setCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sets)
}

const self = "http://10.0.0.1:80"

func newRecorder(t *testing.T, log *slog.Logger) *recorder {
	t.Helper()
	p, err := picker.NewPeers(self, nil, &picker.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{Peers: p}
}

// testConfig is the defaults, with a log the test can read.
func testConfig(t *testing.T, stats *Stats) (config, *logBuffer) {
	t.Helper()
	buf := new(logBuffer)
	cfg, _, err := newWatch("cache.example.", &Options{Port: 80, Stats: stats,
		Logger: slog.New(slog.NewTextHandler(buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, buf
}

// logBuffer is a log the test reads while the watch writes it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startWatch runs watch in the bubble and returns a stop function that
// cancels it and checks that it returned context.Canceled.
func startWatch(t *testing.T, peers interface{ Set(...string) error }, src source, cfg config) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- watch(ctx, peers, src, cfg) }()
	return func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("watch returned %v after cancel, want context.Canceled", err)
		}
	}
}

func addrs(ips ...string) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = "http://" + ip + ":80"
	}
	return out
}

func wantAddrs(t *testing.T, p *recorder, ips ...string) {
	t.Helper()
	want := append(addrs(ips...), self)
	slices.Sort(want)
	want = slices.Compact(want)
	if got := p.Addrs(); !slices.Equal(got, want) {
		t.Errorf("%v: ring %q, want %q", time.Now().Format("15:04:05.000"), got, want)
	}
}

// DNS faults as the resolver reports them.
var (
	errNoSuchHost = &net.DNSError{Err: "no such host", Name: "cache.example.", IsNotFound: true}
	errServFail   = &net.DNSError{Err: "server misbehaving", Name: "cache.example.", IsTemporary: true}
	errMalformed  = &net.DNSError{Err: "cannot unmarshal DNS message", Name: "cache.example."}
)

// A change of the records reaches the ring within the interval plus the
// debounce, wherever it falls between two lookups, and the first answer
// reaches it at once.
func TestWatchChangeReachesRingWithinIntervalPlusDebounce(t *testing.T) {
	for _, interval := range []time.Duration{time.Second, 5 * time.Second} {
		for _, after := range []time.Duration{time.Millisecond, 1234 * time.Millisecond, interval - time.Millisecond} {
			t.Run(fmt.Sprintf("interval=%v/change=%v", interval, after), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					src := &fakeDNS{}
					src.set(nil, addrs("10.0.0.1", "10.0.0.2")...)
					p := newRecorder(t, nil)
					cfg, _ := testConfig(t, nil)
					cfg.interval = interval
					stop := startWatch(t, p, src, cfg)
					defer stop()
					synctest.Wait()
					wantAddrs(t, p, "10.0.0.1", "10.0.0.2")
					time.Sleep(after)
					src.set(nil, addrs("10.0.0.1", "10.0.0.3")...)
					changed := time.Now()
					deadline := changed.Add(cfg.interval + cfg.debounce)
					for p.setCount() < 2 && !time.Now().After(deadline) {
						time.Sleep(time.Millisecond)
					}
					if p.setCount() < 2 {
						t.Fatalf("the change did not reach the ring within Interval + Debounce = %v", deadline.Sub(changed))
					}
					wantAddrs(t, p, "10.0.0.1", "10.0.0.3")
				})
			})
		}
	}
}

// Lookups come every Interval, 5 s by default, whether they succeed or
// fail.
func TestWatchPollsAtInterval(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration // 0: the default
		fault    error
		want     time.Duration
	}{
		{0, nil, 5 * time.Second},
		{0, errNoSuchHost, 5 * time.Second},
		{time.Second, nil, time.Second},
		{time.Second, errServFail, time.Second},
		{7 * time.Second, nil, 7 * time.Second},
	} {
		t.Run(fmt.Sprintf("%v/%v", c.interval, c.fault), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := &fakeDNS{}
				src.set(c.fault, addrs("10.0.0.2")...)
				cfg, _, err := newWatch("cache.example", &Options{Port: 80, Interval: c.interval, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				p := newRecorder(t, nil)
				stop := startWatch(t, p, src, cfg)
				time.Sleep(5*c.want + c.want/2)
				stop()
				src.mu.Lock()
				defer src.mu.Unlock()
				if len(src.asked) != 6 {
					t.Fatalf("%d lookups in 5.5 periods of %v, want 6", len(src.asked), c.want)
				}
				for i := 1; i < len(src.asked); i++ {
					if d := src.asked[i].Sub(src.asked[i-1]); d != c.want {
						t.Errorf("lookup %d came %v after the one before, want %v", i, d, c.want)
					}
				}
				if c.fault != nil {
					wantAddrs(t, p) // self alone: a failure before the first answer changes nothing
				}
			})
		})
	}
}

// A failed or empty answer of every kind, for 30 s (the DNS server
// stopped), leaves the ring as it was, counts in Stats.Kept and says so
// in the log; the first good answer after it applies again.
func TestWatchKeepsLastGoodListOnFailure(t *testing.T) {
	for _, fault := range []error{errEmpty, errNoSuchHost, errServFail, context.DeadlineExceeded, errMalformed} {
		t.Run(fault.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var stats Stats
				src := &fakeDNS{}
				src.set(nil, addrs("10.0.0.1", "10.0.0.2")...)
				p := newRecorder(t, nil)
				cfg, log := testConfig(t, &stats)
				stop := startWatch(t, p, src, cfg)
				defer stop()
				synctest.Wait()
				src.set(fmt.Errorf("lookup: %w", fault))
				time.Sleep(30 * time.Second)
				wantAddrs(t, p, "10.0.0.1", "10.0.0.2")
				if p.setCount() != 1 {
					t.Errorf("%d Sets, want only the first", p.setCount())
				}
				// Lookups at 5, 10, ... 30 s, every one failed.
				if k := stats.Kept.Load(); k < 5 || k > 6 {
					t.Errorf("Stats.Kept = %d after 30 s of failures, want the lookups since (5 or 6)", k)
				}
				if !strings.Contains(log.String(), "keeping the last good peer list") || !strings.Contains(log.String(), fault.Error()) {
					t.Errorf("the log does not say the list was kept, and why:\n%s", log)
				}
				src.set(nil, addrs("10.0.0.3")...)
				time.Sleep(cfg.interval + 2*cfg.debounce)
				wantAddrs(t, p, "10.0.0.3")
				if !strings.Contains(log.String(), "DNS answers again") {
					t.Errorf("the log does not say DNS recovered:\n%s", log)
				}
				if u, l := stats.Updates.Load(), stats.Lookups.Load(); u != 2 || l < stats.Kept.Load()+3 {
					t.Errorf("Stats: %d updates, %d lookups (%d kept), want 2 updates", u, l, stats.Kept.Load())
				}
			})
		})
	}
}

// A record that flickers away for one lookup and back moves no keys; a
// change that holds applies after the debounce.
func TestWatchDebouncesFlicker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeDNS{}
		src.set(nil, addrs("10.0.0.1", "10.0.0.2")...)
		p := newRecorder(t, nil)
		cfg, _ := testConfig(t, nil)
		cfg.interval = time.Second
		stop := startWatch(t, p, src, cfg)
		defer stop()
		synctest.Wait()
		time.Sleep(500 * time.Millisecond)
		src.set(nil, addrs("10.0.0.1")...) // seen by the lookup at 1 s
		time.Sleep(800 * time.Millisecond)
		src.set(nil, addrs("10.0.0.1", "10.0.0.2")...) // back before the debounce lookup at 1.5 s
		time.Sleep(10 * time.Second)
		if n := p.setCount(); n != 1 {
			t.Errorf("%d Sets, want 1: a flicker moved keys", n)
		}
		wantAddrs(t, p, "10.0.0.1", "10.0.0.2")
	})
}

// A flood of changes (a new answer every 100 ms for 20 s) makes at most
// one Set per 4 debounce periods, and the ring ends on the last answer.
func TestWatchDebouncesFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeDNS{}
		src.set(nil, addrs("10.0.0.1")...)
		p := newRecorder(t, nil)
		cfg, _ := testConfig(t, nil)
		cfg.interval = time.Second
		stop := startWatch(t, p, src, cfg)
		defer stop()
		synctest.Wait()
		const flood = 20 * time.Second
		var last string
		for i := range int(flood / (100 * time.Millisecond)) {
			last = fmt.Sprintf("10.0.1.%d", i%250)
			src.set(nil, addrs("10.0.0.1", last)...)
			time.Sleep(100 * time.Millisecond)
		}
		sets := p.setCount() - 1
		if most := int(flood/(maxHold*cfg.debounce)) + 1; sets > most || sets == 0 {
			t.Errorf("%d Sets during a flood of %v, want 1 to %d", sets, flood, most)
		}
		time.Sleep(5 * time.Second)
		wantAddrs(t, p, "10.0.0.1", last)
	})
}

// A list the peer set refuses (Set fails) leaves the ring as it was and
// counts as kept.
func TestWatchKeepsListWhenSetRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var stats Stats
		src := &fakeDNS{}
		src.set(nil, addrs("10.0.0.2")...)
		p := newRecorder(t, nil)
		cfg, log := testConfig(t, &stats)
		cfg.interval = time.Second
		stop := startWatch(t, p, src, cfg)
		defer stop()
		synctest.Wait()
		p.mu.Lock()
		p.fail = fmt.Errorf("%w: bad peer URL", cache.ErrConfig)
		p.mu.Unlock()
		src.set(nil, addrs("10.0.0.3")...)
		time.Sleep(5 * time.Second)
		wantAddrs(t, p, "10.0.0.2")
		if stats.Kept.Load() == 0 || !strings.Contains(log.String(), "bad peer URL") {
			t.Errorf("Stats.Kept = %d, log:\n%s\nwant the refusal counted and logged", stats.Kept.Load(), log)
		}
	})
}

// Cancelling the context stops the watch at once, also in the middle of a
// lookup, and it returns the context's error.
func TestWatchStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &blockingDNS{entered: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		cfg, _ := testConfig(t, nil)
		go func() { done <- watch(ctx, newRecorder(t, nil), src, cfg) }()
		<-src.entered
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("watch returned %v, want context.Canceled", err)
		}
	})
}

// blockingDNS is a lookup that hangs until its context is done.
type blockingDNS struct{ entered chan struct{} }

func (b *blockingDNS) lookup(ctx context.Context) ([]string, error) {
	close(b.entered)
	<-ctx.Done()
	return nil, ctx.Err()
}

// noDNS is a resolver that reaches no DNS server: every lookup fails at
// once.
var noDNS = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("no DNS server in this test")
}}

// Options that cannot work fail at once with cache.ErrConfig.
func TestWatchRejectsBadOptions(t *testing.T) {
	for name, c := range map[string]struct {
		name string
		opts *Options
	}{
		"nil options":          {"cache.example", nil},
		"no port":              {"cache.example", &Options{}},
		"port too big":         {"cache.example", &Options{Port: 65536}},
		"port with SRV":        {"_http._tcp.cache.example", &Options{SRV: true, Port: 80}},
		"IPv6 with SRV":        {"_http._tcp.cache.example", &Options{SRV: true, IPv6: true}},
		"negative debounce":    {"cache.example", &Options{Port: 80, Debounce: -1}},
		"negative interval":    {"cache.example", &Options{Port: 80, Interval: -time.Second}},
		"negative timeout":     {"cache.example", &Options{Port: 80, Timeout: -1}},
		"scheme with colon":    {"cache.example", &Options{Port: 80, Scheme: "http:"}},
		"empty name":           {"", &Options{Port: 80, Resolver: noDNS}},
		"empty label":          {"cache..example", &Options{Port: 80, Resolver: noDNS}},
		"a space":              {"cache peers.example", &Options{Port: 80, Resolver: noDNS}},
		"label of 64":          {strings.Repeat("a", 64) + ".example", &Options{Port: 80, Resolver: noDNS}},
		"name longer than 253": {strings.Repeat("abcdefghi.", 26), &Options{Port: 80, Resolver: noDNS}},
		"SRV target syntax":    {"_http._tcp.*.example", &Options{SRV: true}},
	} {
		t.Run(name, func(t *testing.T) {
			err := Watch(t.Context(), newRecorder(t, nil), c.name, c.opts)
			if !errors.Is(err, cache.ErrConfig) {
				t.Errorf("Watch: %v, want an error wrapping cache.ErrConfig", err)
			}
			// docs/reads.md, "Errors": every error starts with "geecache: " once.
			if s := err.Error(); !strings.HasPrefix(s, "geecache: ") || strings.Count(s, "geecache: ") != 1 {
				t.Errorf("Watch: %q; want one \"geecache: \" prefix", s)
			}
		})
	}
	// A valid one is not refused: it runs until its context is done.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Watch(ctx, newRecorder(t, nil), "cache.example", &Options{Port: 80, Resolver: noDNS}); !errors.Is(err, context.Canceled) ||
		!strings.HasPrefix(err.Error(), "geecache: ") {
		t.Errorf("Watch with valid options and a done context: %v, want context.Canceled with the \"geecache: \" prefix", err)
	}
}

// Before the first good answer, a name with no records (a fresh deploy's
// headless Service, its pods not ready yet) is logged at Info, not Warn:
// nothing is kept and nothing is wrong yet. A server failure is still a
// Warn then, and so is an empty answer once a list was applied.
func TestWatchLogsAFreshDeploysEmptyAnswersAtInfo(t *testing.T) {
	level := func(log, fault string) string {
		for line := range strings.Lines(log) {
			if strings.Contains(line, "keeping the last good peer list") && strings.Contains(line, fault) {
				_, after, _ := strings.Cut(line, "level=")
				lvl, _, _ := strings.Cut(after, " ")
				return lvl
			}
		}
		return "none"
	}
	for _, c := range []struct {
		fault error
		want  string
	}{{errEmpty, "INFO"}, {errNoSuchHost, "INFO"}, {errServFail, "WARN"}, {context.DeadlineExceeded, "WARN"}} {
		t.Run(c.fault.Error(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := &fakeDNS{}
				src.set(fmt.Errorf("lookup: %w", c.fault))
				p := newRecorder(t, nil)
				cfg, log := testConfig(t, nil)
				stop := startWatch(t, p, src, cfg)
				defer stop()
				synctest.Wait()
				if got := level(log.String(), c.fault.Error()); got != c.want {
					t.Errorf("before any good answer: logged at %s, want %s:\n%s", got, c.want, log)
				}
				src.set(nil, addrs("10.0.0.1")...)
				time.Sleep(cfg.interval + 2*cfg.debounce)
				wantAddrs(t, p, "10.0.0.1")
				before := len(log.String())
				src.set(fmt.Errorf("lookup: %w", c.fault))
				time.Sleep(cfg.interval + time.Second)
				if got := level(log.String()[before:], c.fault.Error()); got != "WARN" {
					t.Errorf("after a list was applied: logged at %s, want WARN:\n%s", got, log.String()[before:])
				}
			})
		})
	}
}
