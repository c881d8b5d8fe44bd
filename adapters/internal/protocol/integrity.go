package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// Checksum returns the HeaderChecksum of body in a cluster without a
// secret: its xxhash64 as 16 lower-case hex digits, which catches a broken
// or foreign peer. With a secret the checksum is SHA-256 (see checksum),
// which the signatures cover, so that nobody can swap a body for another
// with the same sum.
func Checksum(body []byte) string {
	var b [16]byte
	return string(appendChecksum(b[:0], xxhash.Sum64(body)))
}

// checksum returns the HeaderChecksum of body: Checksum without a secret,
// the SHA-256 of body as 64 lower-case hex digits with one.
func checksum(secret, body []byte) string {
	if secret == nil {
		return Checksum(body)
	}
	s := sha256.Sum256(body)
	return hex.EncodeToString(s[:])
}

// sumMatches reports whether sum is the checksum of body, as checksum
// would say, without making its string.
func sumMatches(secret []byte, sum string, body []byte) bool {
	var b [2 * sha256.Size]byte
	if secret == nil {
		return string(appendChecksum(b[:0], xxhash.Sum64(body))) == sum
	}
	s := sha256.Sum256(body)
	hex.Encode(b[:], s[:])
	return string(b[:]) == sum
}

func appendChecksum(dst []byte, sum uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, digits[(sum>>uint(shift))&0xf])
	}
	return dst
}

// seal adds the checksum of r's body to r's header and, with a secret, the
// response signature bound to req's signature, status and code.
func (s *Server) seal(req Request, r Response) Response {
	secret := s.cfg.Secret
	if r.Header == nil {
		r.Header = Header{}
	}
	sum := s.bodyChecksum(r)
	r.Header[HeaderChecksum] = []string{sum}
	if secret != nil {
		r.Header[HeaderSignature] = []string{hex.EncodeToString(
			responseMAC(s.macs, Field(req.Header, HeaderSignature), r.Status, r.Code(), sum, Field(r.Header, HeaderTTL)))}
	} else {
		delete(r.Header, HeaderSignature)
	}
	return r
}

// bodyChecksum returns the HeaderChecksum of r's body (see checksum),
// hashing a Value in place.
func (s *Server) bodyChecksum(r Response) string {
	if s.cfg.Secret == nil {
		var b [16]byte
		return string(appendChecksum(b[:0], s.bodySum(r)))
	}
	h := sha256.New()
	if r.Value.Len() == 0 {
		h.Write(r.Body)
	} else {
		_, _ = r.Value.WriteTo(h) // a hash's Write never fails
	}
	return hex.EncodeToString(h.Sum(nil))
}

// bodySum returns the xxhash64 of r's body. A Value is hashed in place,
// written to a pooled digest (one on the stack would escape through
// io.Writer), or if the cache kept its sum when it stored it, not hashed
// at all: the digest is a valuesum.Sink, told the sum by the Value.
func (s *Server) bodySum(r Response) uint64 {
	if r.Value.Len() == 0 {
		return xxhash.Sum64(r.Body)
	}
	d := s.digests.Get().(*digest)
	d.Reset()
	d.known = false
	_, _ = r.Value.WriteTo(d) // a Digest's Write never fails
	sum := d.sum
	if !d.known {
		sum = d.Sum64()
	}
	s.digests.Put(d)
	return sum
}

// A digest is an xxhash64 Digest that can be told the sum instead
// (valuesum.Sink).
type digest struct {
	xxhash.Digest
	known bool
	sum   uint64
}

// Known implements valuesum.Sink.
func (d *digest) Known(sum uint64) { d.known, d.sum = true, sum }

// checkHeader checks, before any body is read, what the headers of a
// response to req must have: a checksum on a 200 (and on every response
// with a secret), and with a secret a valid response signature. It returns
// an error wrapping ErrIntegrity.
//
// A 401 that fails is reported as ErrUnauthorized too: a node that does
// not share the secret, or a version 1 node, answers so, and either way
// the caller treats it as a failed peer.
func (c *Client) checkHeader(req Request, status int, header Header) error {
	err := c.checkSeal(req, status, header)
	if err != nil && status == statusUnauthorized {
		return fmt.Errorf("%w (%w)", ErrUnauthorized, err)
	}
	return err
}

func (c *Client) checkSeal(req Request, status int, header Header) error {
	sum := Field(header, HeaderChecksum)
	if sum == "" && (status == statusOK || c.cfg.Secret != nil) {
		return fmt.Errorf("%w: %d response without %s (not a version %d node?)", ErrIntegrity, status, HeaderChecksum, Version)
	}
	if c.cfg.Secret == nil {
		return nil
	}
	got, err := hex.DecodeString(Field(header, HeaderSignature))
	if err != nil || !hmac.Equal(got, responseMAC(c.macs, Field(req.Header, HeaderSignature), status, Code(Field(header, HeaderError)), sum, Field(header, HeaderTTL))) {
		return fmt.Errorf("%w: %d response without a valid signature", ErrIntegrity, status)
	}
	return nil
}

// checkBody checks body against the checksum in header (of a response, or
// of a PUT), if it has one (checkHeader has made sure it has when it must).
func checkBody(secret []byte, header Header, body []byte) error {
	if sum := Field(header, HeaderChecksum); sum != "" && !sumMatches(secret, sum, body) {
		return fmt.Errorf("%w: the %d-byte body does not match checksum %s", ErrIntegrity, len(body), clip(sum))
	}
	return nil
}
