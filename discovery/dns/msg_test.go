package dns

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// rrSpec is one answer record for respond.
type rrSpec struct {
	owner string
	typ   uint16
	ttl   uint32
	data  []byte
}

// respond builds a response to appendQuery's query, names uncompressed.
func respond(id uint16, name string, qtype uint16, flags uint16, rrs ...rrSpec) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = binary.BigEndian.AppendUint16(b, flagQR|flags)
	b = append(b, 0, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(len(rrs)))
	b = append(b, 0, 0, 0, 0)
	b = appendName(b, name)
	b = binary.BigEndian.AppendUint16(b, qtype)
	b = binary.BigEndian.AppendUint16(b, classIN)
	for _, r := range rrs {
		b = appendName(b, r.owner)
		b = binary.BigEndian.AppendUint16(b, r.typ)
		b = binary.BigEndian.AppendUint16(b, classIN)
		b = binary.BigEndian.AppendUint32(b, r.ttl)
		b = binary.BigEndian.AppendUint16(b, uint16(len(r.data)))
		b = append(b, r.data...)
	}
	return b
}

func srvData(port uint16, target string) []byte {
	b := []byte{0, 10, 0, 5}
	b = binary.BigEndian.AppendUint16(b, port)
	return appendName(b, target)
}

// The parser follows a CNAME chain to the records of its last name, takes
// the lowest TTL along it, ignores records of other names and types, and
// reads compressed names.
func TestParseFollowsCNAMEsAndCompression(t *testing.T) {
	msg := respond(7, "cache.example.", typeA, 0,
		rrSpec{"cache.example.", typeCNAME, 60, appendName(nil, "pods.example.")},
		rrSpec{"pods.example.", typeA, 30, []byte{10, 0, 0, 1}},
		rrSpec{"other.example.", typeA, 1, []byte{10, 9, 9, 9}}, // not on the chain
		rrSpec{"pods.example.", typeAAAA, 1, make([]byte, 16)},  // another type
		rrSpec{"PODS.example.", typeA, 45, []byte{10, 0, 0, 2}}, // names compare without case
	)
	// One more record whose owner is a pointer to "pods.example." in the
	// first record's data.
	ptr := 12 + len(appendName(nil, "cache.example.")) + 4 + len(appendName(nil, "cache.example.")) + 10
	msg = append(msg, 0xc0|byte(ptr>>8), byte(ptr))
	msg = binary.BigEndian.AppendUint16(msg, typeA)
	msg = binary.BigEndian.AppendUint16(msg, classIN)
	msg = binary.BigEndian.AppendUint32(msg, 40)
	msg = append(msg, 0, 4, 10, 0, 0, 3)
	binary.BigEndian.PutUint16(msg[6:], 6)

	r, err := parse(msg, 7, "cache.example.", typeA)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rec := range r.records {
		got = append(got, rec.addr.String())
	}
	if want := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}; !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
	if r.ttl != 30 {
		t.Errorf("ttl %d, want the chain's lowest, 30", r.ttl)
	}
}

func TestParseSRVAndRcodes(t *testing.T) {
	msg := respond(1, "_p._tcp.example.", typeSRV, 0,
		rrSpec{"_p._tcp.example.", typeSRV, 5, srvData(8080, "a.example.")},
		rrSpec{"_p._tcp.example.", typeSRV, 9, srvData(8081, "b.example.")})
	r, err := parse(msg, 1, "_p._tcp.example.", typeSRV)
	if err != nil || len(r.records) != 2 || r.records[1].target != "b.example" || r.records[1].port != 8081 || r.ttl != 5 {
		t.Fatalf("parse SRV: %+v, %v", r, err)
	}
	for rcode, want := range map[uint16]int{rcodeNXDomain: rcodeNXDomain, rcodeServFail: rcodeServFail, 5: 5} {
		r, err := parse(respond(1, "x.", typeA, rcode), 1, "x.", typeA)
		if err != nil || r.rcode != want {
			t.Errorf("rcode %d: %+v, %v", rcode, r, err)
		}
	}
	if r, err := parse(respond(1, "x.", typeA, flagTC), 1, "x.", typeA); err != nil || !r.truncated {
		t.Errorf("TC: %+v, %v, want truncated", r, err)
	} // TTLs: the lowest counts; one with the top bit set is 0 (RFC 2181
	// section 8), so Watch asks again at MinInterval, not in 68 years.
	for _, c := range []struct {
		ttls []uint32
		want uint32
	}{
		{[]uint32{0, 60}, 0}, {[]uint32{1<<31 - 1}, 1<<31 - 1}, {[]uint32{1 << 31, 60}, 0}, {[]uint32{1<<32 - 1}, 0},
	} {
		var rrs []rrSpec
		for i, ttl := range c.ttls {
			rrs = append(rrs, rrSpec{"x.", typeA, ttl, []byte{10, 0, 0, byte(i + 1)}})
		}
		if r, err := parse(respond(1, "x.", typeA, 0, rrs...), 1, "x.", typeA); err != nil || r.ttl != c.want || len(r.records) != len(c.ttls) {
			t.Errorf("TTLs %d: ttl %d, %d records, %v; want ttl %d", c.ttls, r.ttl, len(r.records), err, c.want)
		}
	}
}

// Answers that are not well-formed responses to the query fail with
// errMismatch (wait for another) or errMalformed (a failed lookup).
func TestParseRefusesLies(t *testing.T) {
	good := respond(9, "x.example.", typeA, 0, rrSpec{"x.example.", typeA, 5, []byte{10, 0, 0, 1}})
	loop := slices.Clone(good)
	binary.BigEndian.PutUint16(loop[6:], 1)
	owner := 12 + len(appendName(nil, "x.example.")) + 4
	loop[owner], loop[owner+1] = 0xc0, byte(owner) // points at itself
	forward := slices.Clone(good)
	forward[owner], forward[owner+1] = 0xc0, byte(owner+2)
	for name, c := range map[string]struct {
		msg  []byte
		want error
	}{
		"short":                  {good[:11], errMalformed},
		"other id":               {func() []byte { m := slices.Clone(good); m[1]++; return m }(), errMismatch},
		"a query":                {func() []byte { m := slices.Clone(good); m[2] &^= 0x80; return m }(), errMismatch},
		"other name":             {respond(9, "y.example.", typeA, 0), errMismatch},
		"other type":             {respond(9, "x.example.", typeAAAA, 0), errMismatch},
		"cut in the answer":      {good[:len(good)-2], errMalformed},
		"rdlength past end":      {func() []byte { m := slices.Clone(good); m[len(m)-5] = 9; return m }(), errMalformed},
		"A of 5 bytes":           {respond(9, "x.example.", typeA, 0, rrSpec{"x.example.", typeA, 5, []byte{1, 2, 3, 4, 5}}), errMalformed},
		"AAAA in A's place":      {respond(9, "x.example.", typeA, 0, rrSpec{"x.example.", typeA, 5, make([]byte, 16)}), errMalformed},
		"pointer loop":           {loop, errMalformed},
		"forward pointer":        {forward, errMalformed},
		"label type 0x40":        {func() []byte { m := slices.Clone(good); m[owner] = 0x41; return m }(), errMalformed},
		"more answers than sent": {func() []byte { m := slices.Clone(good); m[7] = 200; return m }(), errMalformed},
		"SRV target past rdata": {respond(9, "x.example.", typeSRV, 0,
			rrSpec{"x.example.", typeSRV, 5, srvData(80, "a.example.")[:8]}), errMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			q := typeA
			if strings.HasPrefix(name, "SRV") {
				q = typeSRV
			}
			if _, err := parse(c.msg, 9, "x.example.", uint16(q)); !errors.Is(err, c.want) {
				t.Errorf("parse: %v, want %v", err, c.want)
			}
		})
	}
	if r, err := parse(good, 9, "X.Example.", typeA); err != nil || len(r.records) != 1 {
		t.Errorf("the well-formed answer: %+v, %v", r, err)
	}
}

// FuzzParse: no message makes parse panic, loop or return more records
// than the message can hold (11 bytes each at least).
func FuzzParse(f *testing.F) {
	f.Add(respond(1, "x.example.", typeA, 0, rrSpec{"x.example.", typeA, 5, []byte{10, 0, 0, 1}}), uint16(typeA))
	f.Add(respond(1, "x.example.", typeSRV, 0, rrSpec{"x.example.", typeSRV, 5, srvData(80, "a.example.")}), uint16(typeSRV))
	f.Add(respond(1, "x.example.", typeA, 0, rrSpec{"x.example.", typeCNAME, 5, appendName(nil, "x.example.")}), uint16(typeA))
	f.Add(appendQuery(nil, 1, "x.example.", typeAAAA), uint16(typeAAAA))
	f.Fuzz(func(t *testing.T, msg []byte, qtype uint16) {
		r, err := parse(msg, 1, "x.example.", qtype)
		if err == nil && len(r.records) > len(msg)/11 {
			t.Fatalf("%d records from %d bytes", len(r.records), len(msg))
		}
		for _, rec := range r.records {
			if qtype == typeA && !rec.addr.Is4() || len(rec.target) > 1024 {
				t.Fatalf("record %+v", rec)
			}
		}
	})
}

func TestResolvConf(t *testing.T) {
	rc := parseResolvConf(strings.NewReader(`# a Pod's
nameserver 10.96.0.10
nameserver fe80::1%eth0
nameserver not-an-ip
search default.svc.cluster.local svc.cluster.local cluster.local
options ndots:5 timeout:1
`))
	if want := []string{"10.96.0.10:53", "[fe80::1%eth0]:53"}; !slices.Equal(rc.servers, want) {
		t.Errorf("servers %q, want %q", rc.servers, want)
	}
	if got, want := rc.candidates("cache-peers"), []string{"cache-peers.default.svc.cluster.local.",
		"cache-peers.svc.cluster.local.", "cache-peers.cluster.local.", "cache-peers."}; !slices.Equal(got, want) {
		t.Errorf("candidates %q, want %q", got, want)
	}
	if got := rc.candidates("cache.example.com."); !slices.Equal(got, []string{"cache.example.com."}) {
		t.Errorf("absolute name: candidates %q", got)
	}
	rc.ndots = 1
	if got := rc.candidates("cache.example"); got[0] != "cache.example." || len(got) != 4 {
		t.Errorf("ndots 1: candidates %q, want the name as it is first", got)
	}
	empty := parseResolvConf(strings.NewReader(""))
	if !slices.Equal(empty.servers, []string{"127.0.0.1:53", "[::1]:53"}) || empty.ndots != 1 || len(empty.search) != 0 {
		t.Errorf("no resolv.conf: %+v, want Go's defaults", empty)
	}
}
