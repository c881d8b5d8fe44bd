//go:build linux

package lambda

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/geecache/geecache/internal/testkit"
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

// freeAddr returns a loopback address for a process that must be told
// its address (an emulator): a port that is free now and lies below the
// kernel's ephemeral range, so that no socket bound to port 0 (a front,
// another test's server) and no outgoing connection, in this process or
// any other on the machine, is given it before the process binds it.
// (With a port the OS had picked and released, a front listening later
// could be given an emulator's port: the emulator then failed to start,
// and its peers' invokes reached the front, which sent them on as a POST
// event to another node.) Whether the process did bind it is checked by
// startEmulatorAt.
func freeAddr(t testing.TB) string {
	t.Helper()
	low := 32768 // Linux's default ip_local_port_range starts here
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				low = n
			}
		}
	}
	for range 100 {
		port := low/2 + rand.IntN(low-low/2)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			addr := ln.Addr().String()
			ln.Close()
			return addr
		}
	}
	t.Fatalf("no free port in [%d, %d)", low/2, low)
	return ""
}

// emulator is one aws-lambda-rie process running the bootstrap.
type emulator struct {
	cmd    *exec.Cmd
	addr   string // invoke address
	out    *testkit.Buffer
	exited chan struct{} // closed when the process has ended
	mu     sync.Mutex
	killed bool
}

// startEmulator starts the emulator with env added to the function's
// environment, waits until it listens on its addresses, and stops it (its
// whole process group, by PID) when the test ends.
func startEmulator(t testing.TB, rie, bootstrap string, env []string) *emulator {
	t.Helper()
	return startEmulatorAt(t, rie, bootstrap, freeAddr(t), env)
}

// startEmulatorAt is startEmulator with the invoke address given, for
// nodes that must know each other's endpoints before they start.
func startEmulatorAt(t testing.TB, rie, bootstrap, addr string, env []string) *emulator {
	t.Helper()
	e, err := launchEmulator(t, rie, bootstrap, addr, env)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// launchEmulator is startEmulatorAt, returning an emulator that does not
// come up as an error.
func launchEmulator(t testing.TB, rie, bootstrap, addr string, env []string) (*emulator, error) {
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
		return nil, fmt.Errorf("starting emulator: %w", err)
	}
	e.exited = make(chan struct{})
	go func() {
		_ = e.cmd.Wait()
		close(e.exited)
	}()
	t.Cleanup(e.kill)
	if err := e.waitListening(api, 15*time.Second); err != nil {
		return nil, fmt.Errorf("emulator on %s (runtime API %s) not up: %w\n%s", e.addr, api, err, e.out)
	}
	return e, nil
}

// waitListening waits until the emulator process itself listens on its
// invoke address and on api, the runtime API's. That another socket
// accepts connections there proves nothing: if the port was taken, the
// emulator exits, and whatever holds the port would answer its invokes.
func (e *emulator) waitListening(api string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-e.exited:
			return fmt.Errorf("the emulator exited (%v)", e.cmd.ProcessState)
		default:
		}
		a, err := listensOn(e.cmd.Process.Pid, e.addr)
		if err == nil {
			var b bool
			if b, err = listensOn(e.cmd.Process.Pid, api); err == nil && a && b {
				return nil
			}
		}
		if err != nil {
			select {
			case <-e.exited: // its descriptors went with it
				return fmt.Errorf("the emulator exited (%v)", e.cmd.ProcessState)
			case <-time.After(time.Second):
				return err
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v the emulator does not listen on both its invoke address and the runtime API's", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// listensOn reports whether process pid has a socket listening on addr,
// an IPv4 "host:port", from /proc/net/tcp and the process's descriptors.
func listensOn(pid int, addr string) (bool, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return false, fmt.Errorf("address %q is not IPv4 host:port", addr)
	}
	ip := ap.Addr().As4()
	// /proc/net/tcp writes the address as the 32-bit word in host (little
	// endian) order, then the port, in hex.
	local := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], ap.Port())
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false, err
	}
	inodes := map[string]bool{}
	for line := range strings.SplitSeq(string(table), "\n") {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if len(f) >= 10 && f[1] == local && f[3] == "0A" { // 0A: LISTEN
			inodes["socket:["+f[9]+"]"] = true
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && inodes[l] {
			return true, nil
		}
	}
	return false, nil
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
	<-e.exited
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
	var fronts []string
	for _, ln := range lns {
		fronts = append(fronts, "http://"+ln.Addr().String())
	}
	warmUp(t, fronts)
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

// TestRIEStartOnTakenAddress: an emulator told an address that another
// socket holds (as a front given a just-released port once held an
// emulator's) does not come up, though the address accepts connections:
// otherwise the invokes meant for it would reach the other socket.
func TestRIEStartOnTakenAddress(t *testing.T) {
	rie := rieBinary(t)
	bootstrap := buildBootstrap(t)
	ln := listen(t)
	defer ln.Close()
	go func() { // accept, as a front would
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	e, err := launchEmulator(t, rie, bootstrap, ln.Addr().String(), nil)
	if err == nil {
		t.Fatalf("%v came up on an address another socket holds", e)
	}
	if !strings.Contains(err.Error(), "exited") && !strings.Contains(err.Error(), "does not listen") {
		t.Errorf("err = %v, want the emulator to have exited or not to listen", err)
	}
}

// warmUp invokes each front's function once with a request that loads
// nothing (a group no node has; with a secret, unsigned), so that a function's cold start (30 ms
// here, much more on a loaded machine) is not paid inside a peer's fetch,
// where a delay past the hedge delay makes the peer load the key beside
// it, and the test count a load by a node that does not own the key.
func warmUp(t testing.TB, fronts []string) {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	for _, f := range fronts {
		res, err := hc.Get(f + "/_geecache/warm-up/none")
		if err != nil {
			t.Fatalf("warming up %s: %v", f, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("warming up %s: %s, want the function's 404 (no such group) or 401", f, res.Status)
		}
	}
}
