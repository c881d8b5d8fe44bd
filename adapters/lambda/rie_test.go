//go:build linux

package lambda

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/geecache/geecache/internal/testkit"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Helpers that run the example node under the real Lambda Runtime Interface
// Emulator. GEECACHE_RIE names the aws-lambda-rie binary
// (scripts/lambda-integration.sh installs the pinned version and sets it).

// rieBinary returns the emulator's path, or skips the test.
func rieBinary(t testing.TB) string {
	t.Helper()
	rie := os.Getenv("GEECACHE_RIE")
	if rie == "" {
		t.Skip("GEECACHE_RIE is not set; run scripts/lambda-integration.sh")
	}
	if _, err := os.Stat(rie); err != nil {
		t.Fatalf("GEECACHE_RIE: %v", err)
	}
	return rie
}

// buildBootstrap builds examples/lambda as Lambda does and returns the
// bootstrap's path.
func buildBootstrap(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", out,
		"github.com/geecache/geecache/examples/lambda")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building bootstrap: %v\n%s", err, b)
	}
	return out
}

// listen returns a listener on a loopback port the OS picks.
func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// freeAddr returns a loopback address that was free a moment ago, for a
// process that must be told its address.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln := listen(t)
	defer ln.Close()
	return ln.Addr().String()
}

// emulator is one aws-lambda-rie process running the bootstrap.
type emulator struct {
	cmd    *exec.Cmd
	addr   string // invoke address
	out    *testkit.Buffer
	mu     sync.Mutex
	killed bool
}

// startEmulator starts the emulator with env added to the function's
// environment, waits until it accepts connections, and stops it (its whole
// process group, by PID) when the test ends.
func startEmulator(t testing.TB, rie, bootstrap string, env []string) *emulator {
	t.Helper()
	return startEmulatorAt(t, rie, bootstrap, freeAddr(t), env)
}

// startEmulatorAt is startEmulator with the invoke address given, for
// nodes that must know each other's endpoints before they start.
func startEmulatorAt(t testing.TB, rie, bootstrap, addr string, env []string) *emulator {
	t.Helper()
	e := &emulator{addr: addr, out: &testkit.Buffer{}}
	api := freeAddr(t)
	// Both addresses, always on 127.0.0.1: an unknown flag or a missing
	// address makes the emulator listen on 0.0.0.0:8080.
	e.cmd = exec.Command(rie,
		"--runtime-interface-emulator-address", e.addr,
		"--runtime-api-address", api,
		"--log-level", "error",
		bootstrap)
	e.cmd.Env = append(os.Environ(), env...)
	e.cmd.Stdout, e.cmd.Stderr = e.out, e.out
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the bootstrap is its child
	e.cmd.WaitDelay = 5 * time.Second
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("starting emulator: %v", err)
	}
	t.Cleanup(e.kill)
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", e.addr, time.Second)
		if err == nil {
			c.Close()
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("emulator on %s not up: %v\n%s", e.addr, err, e.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill stops the emulator and its function, and waits for them (bounded by
// WaitDelay).
func (e *emulator) kill() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.killed {
		return
	}
	e.killed = true
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	_ = e.cmd.Wait()
}

// loads returns how many times the function's source was read, by
// "group/key", from the "[SlowDB] search key" lines of its log.
func (e *emulator) loads() map[string]int {
	m := make(map[string]int)
	sc := bufio.NewScanner(strings.NewReader(e.out.String()))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var l struct{ Msg, Group, Key string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "[SlowDB] search key" {
			m[l.Group+"/"+l.Key]++
		}
	}
	return m
}

// startFront serves a Front for e on ln until the test ends.
func startFront(t testing.TB, ln net.Listener, e *emulator) {
	t.Helper()
	serveFront(t, ln, "http://"+e.addr, 20*time.Second)
}

// lambdaCluster starts one emulator and front per listener, each node
// configured with all of peers (its own front URL among them).
func lambdaCluster(t testing.TB, rie, bootstrap string, lns []net.Listener, peers []string, secret string) []*emulator {
	t.Helper()
	var ems []*emulator
	for _, ln := range lns {
		self := "http://" + ln.Addr().String()
		e := startEmulator(t, rie, bootstrap, []string{
			envSelfURL + "=" + self,
			envPeers + "=" + strings.Join(peers, ","),
			envSecret + "=" + secret,
		})
		startFront(t, ln, e)
		ems = append(ems, e)
	}
	return ems
}

// waitLoads waits, boundedly, until the emulators' logs show at least want
// loads in all, and returns the loads per node. A function's log line can
// reach the emulator's output a moment after its response.
func waitLoads(t testing.TB, ems []*emulator, want int) []map[string]int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var all []map[string]int
		total := 0
		for _, e := range ems {
			m := e.loads()
			for _, n := range m {
				total += n
			}
			all = append(all, m)
		}
		if total >= want || time.Now().After(deadline) {
			return all
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *emulator) String() string { return fmt.Sprintf("emulator %s", e.addr) }
