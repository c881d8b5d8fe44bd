package protocol

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// v1Request builds, by hand, the request a version 1 client sends: no
// target or peer header in the signature.
func v1Request(secret []byte, now time.Time, group, key string) Request {
	path := Path(group, key)
	h := Header{HeaderPeer: {"1"}}
	if secret != nil {
		ts := strconv.FormatInt(now.Unix(), 10)
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("GEECACHE1\nGET\n" + path + "\n" + ts))
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, hex.EncodeToString(m.Sum(nil)))
	}
	return Request{Method: http.MethodGet, Path: path, Header: h}
}

// Each cell of PROTOCOL.md's rolling-upgrade table.
func TestMixedVersions(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	secret := []byte("s")
	db := newCountingDB(map[string][]byte{"Tom": []byte("630")})
	reg := newTestRegistry(t, db, nil)

	t.Run("v1 client, v2 server, no secret", func(t *testing.T) {
		r := newServer(t, reg, nil).Serve(ctx, v1Request(nil, now, "scores", "Tom"))
		if r.Status != 200 || bodyOf(r) != "630" {
			t.Fatalf("%d %q; want 200 630 (a v1 client reads the body and ignores the new headers)", r.Status, bodyOf(r))
		}
	})
	t.Run("v1 client, v2 server, secret", func(t *testing.T) {
		before := db.count("Tom")
		r := newServer(t, reg, &ServerOptions{Secret: secret}).Serve(ctx, v1Request(secret, now, "scores", "Tom"))
		if r.Status != http.StatusUnauthorized || db.count("Tom") != before {
			t.Fatalf("%d %q, %d loads; want 401 and nothing loaded", r.Status, r.Body, db.count("Tom")-before)
		}
	})

	// What a v1 server answers, built by hand: no checksum, no signature.
	v1 := func(status int, code Code, body string) Response {
		h := Header{}
		if code != "" {
			h.Set(HeaderError, string(code))
		}
		return Response{Status: status, Header: h, Body: []byte(body)}
	}
	for _, tc := range []struct {
		name         string
		secret       []byte
		resp         Response
		want         error
		wantNotFound bool
	}{
		{"v2 client, v1 server, value", nil, v1(200, "", "630"), ErrIntegrity, false},
		{"v2 client, v1 server, not found", nil, v1(404, CodeNotFound, "kkk not exist\n"), getter.ErrNotFound, true},
		{"v2 client, v1 server, secret, value", secret, v1(200, "", "630"), ErrIntegrity, false},
		{"v2 client, v1 server, secret, not found", secret, v1(404, CodeNotFound, "kkk not exist\n"), ErrIntegrity, false},
		{"v2 client, v1 server, secret, 401", secret, v1(401, CodeUnauthorized, "unauthorized: wrong signature\n"), ErrUnauthorized, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, &ClientOptions{Secret: tc.secret})
			v, err := read(ctx, c, c.NewRequest(ctx, testSelf, "scores", "Tom", false), tc.resp, -2)
			if v != nil || !errors.Is(err, tc.want) || errors.Is(err, getter.ErrNotFound) != tc.wantNotFound {
				t.Fatalf("= %q, %v; want %v (not found: %v)", v, err, tc.want, tc.wantNotFound)
			}
			if tc.secret != nil && !errors.Is(err, ErrIntegrity) {
				t.Fatalf("err = %v; want ErrIntegrity too", err)
			}
		})
	}
}

// With a secret, a genuine response is accepted only as the answer to the
// request it was signed for, and with the status and code it was signed
// with.
func TestResponseSignatureBindings(t *testing.T) {
	ctx := context.Background()
	secret := []byte("s")
	s := newServer(t, newTestRegistry(t, newCountingDB(map[string][]byte{"Tom": []byte("630")}), nil), &ServerOptions{Secret: secret})
	c := newClient(t, &ClientOptions{Secret: secret})
	tom := c.NewRequest(ctx, testSelf, "scores", "Tom", false)
	kkk := c.NewRequest(ctx, testSelf, "scores", "kkk", false)
	boom := c.NewRequest(ctx, testSelf, "scores", "boom", false)
	value, notFound, failed := s.Serve(ctx, tom), s.Serve(ctx, kkk), s.Serve(ctx, boom)
	if v, err := read(ctx, c, tom, value, -2); err != nil || string(v) != "630" {
		t.Fatalf("genuine answer: %q, %v", v, err)
	}
	if _, err := read(ctx, c, kkk, notFound, -2); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("genuine not found: %v", err)
	}
	relabel := func(r Response, status int, code Code) Response {
		h := r.Header.Clone()
		h.Set(HeaderError, string(code))
		return Response{Status: status, Header: h, Body: r.Body, Value: r.Value}
	}
	for name, tc := range map[string]struct {
		req  Request
		resp Response
	}{
		"value replayed to another request":     {kkk, value},
		"not found replayed to another request": {tom, relabel(notFound, 404, CodeNotFound)},
		"load error relabelled not found":       {boom, relabel(failed, 404, CodeNotFound)},
		"other value, its checksum":             {tom, Response{Status: 200, Header: withChecksum(value.Header, "631"), Body: []byte("631")}},
	} {
		v, err := read(ctx, c, tc.req, tc.resp, -2)
		if v != nil || !errors.Is(err, ErrIntegrity) || errors.Is(err, getter.ErrNotFound) {
			t.Errorf("%s: %q, %v; want ErrIntegrity", name, v, err)
		}
	}
	// Without a secret the checksum still catches a changed body.
	plain := newClient(t, nil)
	r := newServer(t, s.reg, nil).Serve(ctx, plain.NewRequest(ctx, testSelf, "scores", "Tom", false))
	r.Body, r.Value = r.Value.ByteSlice(), cache.ByteView{}
	r.Body[0] ^= 1
	if v, err := read(ctx, plain, Request{}, r, -2); v != nil || !errors.Is(err, ErrIntegrity) {
		t.Fatalf("flipped bit: %q, %v; want ErrIntegrity", v, err)
	}
}

func withChecksum(h Header, body string) Header {
	h = h.Clone()
	h.Set(HeaderChecksum, Checksum([]byte(body)))
	return h
}
