package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// BenchmarkDemoSIGSTOP runs the demo cluster (examples/cluster) as three
// processes on 127.0.0.1, sends its API 32 closed-loop clients for 6 s (a
// third of the requests for the tutorial's keys, the rest for keys that do not
// exist, as most demo traffic is), stops the node that owns the tutorial's keys
// with SIGSTOP after 1 s (its kernel still accepts connections: the
// hardest peer failure to see), and reports what the clients saw after the
// stop: the longest time in which no request was answered (gap-ms, up to
// the end of the run), the 99th percentile and the longest latency of the
// requests that ended after the stop (one still unanswered at the end
// counts with the time it waited), and the answers that were errors. stop=false is the same run without the stop: the figures the
// slow database (300 ms a lookup) gives anyway. Clients start spread over
// the first 300 ms, as independent users would. Run it by hand, once:
//
//	go test -run='^$' -bench='^BenchmarkDemoSIGSTOP$' -benchtime=1x
func BenchmarkDemoSIGSTOP(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "cluster")
	if out, err := exec.Command("go", "build", "-o", bin, "../examples/cluster").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, stop := range []bool{false, true} {
		b.Run(fmt.Sprintf("stop=%v", stop), func(b *testing.B) {
			for range b.N {
				r := runSIGSTOP(b, bin, stop)
				b.ReportMetric(float64(r.gap.Milliseconds()), "gap-ms")
				b.ReportMetric(float64(r.p99.Milliseconds()), "p99-ms")
				b.ReportMetric(float64(r.max.Milliseconds()), "max-ms")
				b.ReportMetric(float64(r.answered), "answers")
				b.ReportMetric(float64(r.errors), "errors")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

type sigstopResult struct {
	gap, p99, max    time.Duration
	answered, errors int
}

// freePorts returns n ports on 127.0.0.1 that the OS picked.
func freePorts(b *testing.B, n int) []int {
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
	}
	return ports
}

func runSIGSTOP(b *testing.B, bin string, stop bool) sigstopResult {
	ports := freePorts(b, 4)
	peers := fmt.Sprintf("http://127.0.0.1:%d,http://127.0.0.1:%d,http://127.0.0.1:%d", ports[0], ports[1], ports[2])
	api := fmt.Sprintf("127.0.0.1:%d", ports[3])
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGCONT)
			_ = p.Process.Kill()
			_ = p.Wait()
		}
	}()
	for i := range 3 {
		args := []string{"-peers=" + peers, fmt.Sprintf("-port=%d", ports[i])}
		if i == 2 {
			args = append(args, "-api="+api)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	get := func(ctx context.Context, key string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+api+"/api?key="+key, nil)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Ready: every node answers through the API (bounded: 10 s).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, err := get(context.Background(), "Tom"); err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the demo cluster did not come up")
		}
	}
	owner := ownerOfTom(b, procs, strings.Split(peers, ","))

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	var mu sync.Mutex
	var done []time.Time
	var lat []time.Duration
	errs := 0
	stopAt := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	for c := range 32 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			known := []string{"Tom", "Jack", "Sam"}
			time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			for ctx.Err() == nil {
				key := fmt.Sprintf("nobody-%d", rng.IntN(1_000_000))
				if rng.IntN(3) == 0 {
					key = known[rng.IntN(3)]
				}
				t0 := time.Now()
				code, err := get(ctx, key)
				t1 := time.Now()
				if ctx.Err() != nil { // unanswered at the end: it waited this long at least
					mu.Lock()
					if t1.After(stopAt) {
						lat = append(lat, t1.Sub(t0))
					}
					mu.Unlock()
					return
				}
				mu.Lock()
				if t1.After(stopAt) {
					lat = append(lat, t1.Sub(t0))
				}
				done = append(done, t1)
				if err != nil || (code != http.StatusOK && code != http.StatusNotFound) {
					errs++
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Until(stopAt))
	if stop {
		if err := owner.Process.Signal(syscall.SIGSTOP); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	end := time.Now()
	slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
	var gap time.Duration
	prev := stopAt
	for _, t := range done {
		if t.After(stopAt) {
			gap = max(gap, t.Sub(prev))
			prev = t
		}
	}
	gap = max(gap, end.Sub(prev)) // the wait since the last answer
	slices.Sort(lat)
	r := sigstopResult{gap: gap, answered: len(lat), errors: errs}
	if len(lat) > 0 {
		r.p99, r.max = lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return r
}

// ownerOfTom returns the process of the node that owns "Tom" by the
// demo's ring, or the first node if the API node owns it.
func ownerOfTom(b *testing.B, procs []*exec.Cmd, peers []string) *exec.Cmd {
	pool, err := nethttp.NewPool(peers[2], cache.NewRegistry(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Set(peers...); err != nil {
		b.Fatal(err)
	}
	for i, p := range peers[:2] {
		if pool.Owner("Tom") == p {
			return procs[i]
		}
	}
	return procs[0]
}
