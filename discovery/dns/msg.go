package dns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The wire format of RFC 1035 (with EDNS0 of RFC 6891 in the query), the
// part of it that a query for A, AAAA or SRV records needs. The parser
// reads only from the message it is given, never past its end, follows
// compression pointers only backwards, and never allocates more than the
// message's own size allows, so that a lying server cannot make it panic
// or grow.

const (
	typeA     = 1
	typeCNAME = 5
	typeAAAA  = 28
	typeSRV   = 33
	typeOPT   = 41
	classIN   = 1

	rcodeSuccess  = 0
	rcodeFormErr  = 1
	rcodeServFail = 2
	rcodeNXDomain = 3
	rcodeNotImp   = 4
	rcodeRefused  = 5

	flagQR = 1 << 15
	flagTC = 1 << 9
	flagRD = 1 << 8

	// ednsSize is the UDP payload size the query offers: the size DNS
	// Flag Day 2020 recommends, which avoids IP fragmentation.
	ednsSize = 1232
	// maxChain bounds the CNAME chain followed from the query name.
	maxChain = 8
)

var (
	errMalformed = errors.New("malformed DNS message")
	errNXDomain  = errors.New("NXDOMAIN: no such name")
	errServFail  = errors.New("SERVFAIL")
	errMismatch  = errors.New("answer does not match the query")
	// errRcode is any other response code than NOERROR, NXDOMAIN and
	// SERVFAIL.
	errRcode = errors.New("DNS response code")
)

// rcodeError is an answer's response code other than NOERROR.
func rcodeError(rcode int) error {
	switch rcode {
	case rcodeNXDomain:
		return errNXDomain
	case rcodeServFail:
		return errServFail
	case rcodeFormErr:
		return fmt.Errorf("%w %d (FORMERR)", errRcode, rcode)
	case rcodeNotImp:
		return fmt.Errorf("%w %d (NOTIMP)", errRcode, rcode)
	case rcodeRefused:
		return fmt.Errorf("%w %d (REFUSED)", errRcode, rcode)
	}
	return fmt.Errorf("%w %d", errRcode, rcode)
}

// checkName reports whether name (absolute, with its final ".") can be put
// on the wire: labels of 1 to 63 letters, digits, "-" or "_" (the bytes
// readName gives back as they are), at most 255 bytes in all.
func checkName(name string) error {
	if name == "." || !strings.HasSuffix(name, ".") || len(name) > 254 {
		return fmt.Errorf("name %q: not a domain name of 1 to 253 characters", name)
	}
	for _, l := range strings.Split(name[:len(name)-1], ".") {
		if len(l) == 0 || len(l) > 63 {
			return fmt.Errorf("name %q: a label is empty or longer than 63 characters", name)
		}
		for _, ch := range []byte(l) {
			if !plain(ch) {
				return fmt.Errorf("name %q: only letters, digits, - and _ in a label", name)
			}
		}
	}
	return nil
}

// plain reports whether ch stands for itself in a name.
func plain(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_'
}

// appendQuery appends a recursive query for (name, qtype) with an EDNS0
// record offering ednsSize bytes over UDP. name must pass checkName.
func appendQuery(b []byte, id uint16, name string, qtype uint16) []byte {
	b = binary.BigEndian.AppendUint16(b, id)
	b = binary.BigEndian.AppendUint16(b, flagRD)
	b = append(b, 0, 1, 0, 0, 0, 0, 0, 1) // 1 question, 0 answers, 0 authority, 1 additional
	b = appendName(b, name)
	b = binary.BigEndian.AppendUint16(b, qtype)
	b = binary.BigEndian.AppendUint16(b, classIN)
	// OPT: root name, type, UDP size as class, TTL 0 (no extended rcode,
	// version 0, no DO bit), no options.
	b = append(b, 0)
	b = binary.BigEndian.AppendUint16(b, typeOPT)
	b = binary.BigEndian.AppendUint16(b, ednsSize)
	return append(b, 0, 0, 0, 0, 0, 0)
}

func appendName(b []byte, name string) []byte {
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	return append(b, 0)
}

// A record is one usable answer: an address (A, AAAA) or a target and
// port (SRV).
type record struct {
	addr   netip.Addr
	target string // SRV, without the final "."
	port   uint16 // SRV
}

// reply is what parse finds in a response.
type reply struct {
	rcode     int
	truncated bool
	records   []record
	ttl       uint32 // the lowest TTL of the records and CNAMEs used
}

// parse reads a response to the query (id, name, qtype). It fails on a
// message that is not a well-formed response to that query; a response
// with TC set is returned with truncated true and no records. A response
// with the query's ID, an error code and no question section (what a
// server that refuses a query or cannot parse it may send) fails with
// the error of its code, so that the lookup fails on it at once rather
// than waiting for another answer until its timeout.
func parse(msg []byte, id uint16, name string, qtype uint16) (reply, error) {
	var r reply
	if len(msg) < 12 {
		return r, errMalformed
	}
	flags := binary.BigEndian.Uint16(msg[2:])
	if binary.BigEndian.Uint16(msg) != id || flags&flagQR == 0 {
		return r, errMismatch
	}
	r.rcode = int(flags & 0xf)
	r.truncated = flags&flagTC != 0
	qd, an := binary.BigEndian.Uint16(msg[4:]), int(binary.BigEndian.Uint16(msg[6:]))
	if qd == 0 && r.rcode != rcodeSuccess {
		return r, fmt.Errorf("%w, in a reply without the question section", rcodeError(r.rcode))
	}
	if qd != 1 {
		return r, errMismatch
	}
	off := 12
	qname, off, err := readName(msg, off)
	if err != nil {
		return r, err
	}
	if off+4 > len(msg) {
		return r, errMalformed
	}
	if !strings.EqualFold(qname, name) || binary.BigEndian.Uint16(msg[off:]) != qtype ||
		binary.BigEndian.Uint16(msg[off+2:]) != classIN {
		return r, errMismatch
	}
	off += 4
	if r.truncated || r.rcode != rcodeSuccess {
		return r, nil
	}

	// The answer section: the records of qtype, and the CNAMEs that lead
	// to their owner. Each one takes at least 11 bytes, so the slices
	// below cannot outgrow the message.
	type rr struct {
		owner string
		ttl   uint32
		rec   record
		cname string
	}
	var rrs []rr
	for range an {
		var owner string
		if owner, off, err = readName(msg, off); err != nil {
			return r, err
		}
		if off+10 > len(msg) {
			return r, errMalformed
		}
		typ, class := binary.BigEndian.Uint16(msg[off:]), binary.BigEndian.Uint16(msg[off+2:])
		ttl := binary.BigEndian.Uint32(msg[off+4:])
		n := int(binary.BigEndian.Uint16(msg[off+8:]))
		off += 10
		if off+n > len(msg) {
			return r, errMalformed
		}
		data := msg[off : off+n]
		if ttl > 1<<31-1 {
			ttl = 0 // RFC 2181 section 8
		}
		x := rr{owner: owner, ttl: ttl}
		switch {
		case class != classIN:
			off += n
			continue
		case typ == typeCNAME:
			if x.cname, _, err = readName(msg, off); err != nil {
				return r, err
			}
		case typ != qtype:
			off += n
			continue
		case typ == typeA || typ == typeAAAA:
			a, ok := netip.AddrFromSlice(data)
			if !ok || (typ == typeA) != a.Is4() {
				return r, errMalformed
			}
			x.rec.addr = a
		case typ == typeSRV:
			if n < 7 {
				return r, errMalformed
			}
			x.rec.port = binary.BigEndian.Uint16(data[4:])
			var end int
			if x.rec.target, end, err = readName(msg, off+6); err != nil {
				return r, err
			}
			if end != off+n {
				return r, errMalformed
			}
			x.rec.target = strings.TrimSuffix(x.rec.target, ".")
		}
		off += n
		rrs = append(rrs, x)
	}

	// Follow the CNAME chain from the query name, then take the records
	// of its last name.
	owner, ttl := qname, uint32(1<<31-1)
	for range maxChain {
		next := -1
		for i, x := range rrs {
			if x.cname != "" && strings.EqualFold(x.owner, owner) {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		owner, ttl = rrs[next].cname, min(ttl, rrs[next].ttl)
	}
	for _, x := range rrs {
		if x.cname == "" && strings.EqualFold(x.owner, owner) {
			r.records = append(r.records, x.rec)
			ttl = min(ttl, x.ttl)
		}
	}
	if len(r.records) > 0 {
		r.ttl = ttl
	}
	return r, nil
}

// readName reads a possibly compressed name at off and returns it in
// dotted form with a final "." (a "\DDD" escape for a byte that is not a
// letter, digit, "-" or "_"), and the offset just past it. A pointer must
// point before the label that holds it, so the walk always ends.
func readName(msg []byte, off int) (string, int, error) {
	var sb strings.Builder
	end, limit, wire := -1, off, 1
	for {
		if off >= len(msg) {
			return "", 0, errMalformed
		}
		c := int(msg[off])
		switch c & 0xc0 {
		case 0x00:
			if c == 0 {
				if end < 0 {
					end = off + 1
				}
				if sb.Len() == 0 {
					sb.WriteByte('.')
				}
				return sb.String(), end, nil
			}
			if off+1+c > len(msg) {
				return "", 0, errMalformed
			}
			for _, ch := range msg[off+1 : off+1+c] {
				switch {
				case plain(ch):
					sb.WriteByte(ch)
				default:
					sb.WriteString(`\` + strconv.Itoa(int(ch)/100) + strconv.Itoa(int(ch)/10%10) + strconv.Itoa(int(ch)%10))
				}
			}
			sb.WriteByte('.')
			if wire += 1 + c; wire > 255 {
				return "", 0, errMalformed
			}
			off += 1 + c
		case 0xc0:
			if off+2 > len(msg) {
				return "", 0, errMalformed
			}
			ptr := int(binary.BigEndian.Uint16(msg[off:]) & 0x3fff)
			if ptr >= limit {
				return "", 0, errMalformed
			}
			if end < 0 {
				end = off + 2
			}
			off, limit = ptr, ptr
		default:
			return "", 0, errMalformed
		}
	}
}
