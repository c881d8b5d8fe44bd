package dns

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"
)

// The query client: one question to one nameserver over UDP, again over
// TCP when the answer is truncated. It exists because net.Resolver does
// not report TTLs, and Watch polls at the records' TTL.

// maxMsg is the largest DNS message, over UDP or TCP (its 2-byte length
// prefix): the bound of the memory one answer can take.
const maxMsg = 65535

// client asks the nameservers in order, each with its own timeout.
type client struct {
	servers []string // host:port
	timeout time.Duration
	dialer  net.Dialer
}

// exchange sends the query for (name, qtype) to server and returns the
// parsed answer: over UDP first, over TCP if that answer is truncated.
func (c *client) exchange(ctx context.Context, server, name string, qtype uint16) (reply, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	id := uint16(rand.Uint32())
	q := appendQuery(make([]byte, 2, 2+len(name)+32), id, name, qtype) // 2 bytes for TCP's length
	r, err := c.udp(ctx, server, q[2:], id, name, qtype)
	if err != nil || !r.truncated {
		return r, err
	}
	binary.BigEndian.PutUint16(q, uint16(len(q)-2))
	return c.tcp(ctx, server, q, id, name, qtype)
}

func (c *client) udp(ctx context.Context, server string, q []byte, id uint16, name string, qtype uint16) (reply, error) {
	conn, err := c.dialer.DialContext(ctx, "udp", server)
	if err != nil {
		return reply{}, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(q); err != nil {
		return reply{}, ctxErr(ctx, err)
	}
	buf := make([]byte, maxMsg)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return reply{}, ctxErr(ctx, err)
		}
		r, err := parse(buf[:n], id, name, qtype)
		if errors.Is(err, errMismatch) {
			continue // a late answer to an earlier query, or a spoofing attempt: wait for ours
		}
		return r, err
	}
}

func (c *client) tcp(ctx context.Context, server string, q []byte, id uint16, name string, qtype uint16) (reply, error) {
	conn, err := c.dialer.DialContext(ctx, "tcp", server)
	if err != nil {
		return reply{}, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(q); err != nil {
		return reply{}, ctxErr(ctx, err)
	}
	var l [2]byte
	if _, err := io.ReadFull(conn, l[:]); err != nil {
		return reply{}, ctxErr(ctx, err)
	}
	buf := make([]byte, binary.BigEndian.Uint16(l[:])) // at most maxMsg
	if _, err := io.ReadFull(conn, buf); err != nil {
		return reply{}, ctxErr(ctx, err)
	}
	r, err := parse(buf, id, name, qtype)
	if err == nil && r.truncated {
		err = fmt.Errorf("%w: truncated over TCP", errMalformed)
	}
	return r, err
}

// ctxErr prefers the context's error (a timeout or a cancel) to the I/O
// error that the deadline it set caused.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

// resolvConf is what Watch uses of /etc/resolv.conf.
type resolvConf struct {
	servers []string // host:port
	search  []string // absolute, with the final "."
	ndots   int
}

// parseResolvConf reads the nameserver, search (and domain) lines and the
// ndots option, as the C library does; the defaults are those of Go's
// resolver (127.0.0.1:53 and [::1]:53, no search list, ndots 1). Unknown
// lines are ignored.
func parseResolvConf(r io.Reader) resolvConf {
	conf := resolvConf{ndots: 1}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], ";") {
			continue
		}
		switch f[0] {
		case "nameserver":
			if ip := net.ParseIP(strings.SplitN(f[1], "%", 2)[0]); ip != nil {
				conf.servers = append(conf.servers, net.JoinHostPort(f[1], "53"))
			}
		case "domain", "search":
			conf.search = conf.search[:0]
			for _, d := range f[1:] {
				if d = strings.TrimSuffix(d, ".") + "."; checkName(d) == nil {
					conf.search = append(conf.search, d)
				}
			}
		case "options":
			for _, o := range f[1:] {
				if v, ok := strings.CutPrefix(o, "ndots:"); ok {
					if n, err := strconv.Atoi(v); err == nil && n >= 0 {
						conf.ndots = min(n, 15)
					}
				}
			}
		}
	}
	if len(conf.servers) == 0 {
		conf.servers = []string{"127.0.0.1:53", "[::1]:53"}
	}
	return conf
}

// candidates lists the absolute names to try for name, in order, with the
// search list applied as the C library does: a name ending in "." as it
// is; a name with at least ndots dots first as it is, then with each
// search domain; a shorter name with each search domain first.
func (rc resolvConf) candidates(name string) []string {
	if strings.HasSuffix(name, ".") {
		return []string{name}
	}
	out := make([]string, 0, len(rc.search)+1)
	for _, d := range rc.search {
		if n := name + "." + d; checkName(n) == nil {
			out = append(out, n)
		}
	}
	if strings.Count(name, ".") >= rc.ndots {
		return append([]string{name + "."}, out...)
	}
	return append(out, name+".")
}
