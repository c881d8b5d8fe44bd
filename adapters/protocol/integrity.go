package protocol

import (
	"crypto/hmac"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/cespare/xxhash/v2"
)

// Checksum returns the HeaderChecksum of body: its xxhash64 as 16
// lower-case hex digits.
func Checksum(body []byte) string {
	var b [16]byte
	return string(appendChecksum(b[:0], xxhash.Sum64(body)))
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
		r.Header = http.Header{}
	}
	var b [16]byte
	sum := string(appendChecksum(b[:0], s.bodySum(r)))
	r.Header[HeaderChecksum] = []string{sum}
	if secret != nil {
		r.Header[HeaderSignature] = []string{hex.EncodeToString(
			responseMAC(secret, req.Header.Get(HeaderSignature), r.Status, r.Code(), sum, r.Header.Get(HeaderTTL)))}
	} else {
		delete(r.Header, HeaderSignature)
	}
	return r
}

// bodySum returns the xxhash64 of r's body. A Value is hashed in place,
// written to a pooled Digest (one on the stack would escape through
// io.Writer).
func (s *Server) bodySum(r Response) uint64 {
	if r.Value.Len() == 0 {
		return xxhash.Sum64(r.Body)
	}
	d := s.digests.Get().(*xxhash.Digest)
	d.Reset()
	_, _ = r.Value.WriteTo(d) // a Digest's Write never fails
	sum := d.Sum64()
	s.digests.Put(d)
	return sum
}

// checkHeader checks, before any body is read, what the headers of a
// response to req must have: a checksum on a 200 (and on every response
// with a secret), and with a secret a valid response signature. It returns
// an error wrapping ErrIntegrity.
//
// A 401 that fails is reported as ErrUnauthorized too: a node that does
// not share the secret, or a version 1 node, answers so, and either way
// the caller treats it as a failed peer.
func (c *Client) checkHeader(req Request, status int, header http.Header) error {
	err := c.checkSeal(req, status, header)
	if err != nil && status == http.StatusUnauthorized {
		return fmt.Errorf("%w (%w)", ErrUnauthorized, err)
	}
	return err
}

func (c *Client) checkSeal(req Request, status int, header http.Header) error {
	sum := header.Get(HeaderChecksum)
	if sum == "" && (status == http.StatusOK || c.cfg.Secret != nil) {
		return fmt.Errorf("%w: %d response without %s (not a version %d node?)", ErrIntegrity, status, HeaderChecksum, Version)
	}
	if c.cfg.Secret == nil {
		return nil
	}
	got, err := hex.DecodeString(header.Get(HeaderSignature))
	if err != nil || !hmac.Equal(got, responseMAC(c.cfg.Secret, req.Header.Get(HeaderSignature), status, Code(header.Get(HeaderError)), sum, header.Get(HeaderTTL))) {
		return fmt.Errorf("%w: %d response without a valid signature", ErrIntegrity, status)
	}
	return nil
}

// checkBody checks body against the response's checksum, if it has one
// (checkHeader has made sure it has when it must).
func checkBody(header http.Header, body []byte) error {
	var b [16]byte
	if sum := header.Get(HeaderChecksum); sum != "" && sum != string(appendChecksum(b[:0], xxhash.Sum64(body))) {
		return fmt.Errorf("%w: the %d-byte body does not match checksum %s", ErrIntegrity, len(body), clip(sum))
	}
	return nil
}
