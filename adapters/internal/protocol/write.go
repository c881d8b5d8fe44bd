package protocol

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/geecache/geecache/cache"
)

// FormatTTL returns d as HeaderTTL's value: whole milliseconds, at least 1
// for a positive d. A d of 0 or less has no header value ("").
func FormatTTL(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(max(d.Milliseconds(), 1), 10)
}

// ResponseTTL returns the lifetime a response's HeaderTTL gives, or 0 if
// it has none or a malformed one.
func ResponseTTL(h Header) time.Duration {
	s := Field(h, HeaderTTL)
	if s == "" {
		return 0 // most answers: without it ParseInt would allocate its error
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms <= 0 || ms > int64(time.Duration(1<<62)/time.Millisecond) {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// NewRemoveRequest returns the request that makes the node at target drop
// key of group from its memory: DELETE of the key's path, a peer request,
// signed with a secret.
func (c *Client) NewRemoveRequest(ctx context.Context, target, group, key string) Request {
	return c.newRequest(ctx, methodDelete, target, group, key, nil, 0)
}

// NewSetRequest returns the request that makes the node at target, the
// owner of key, store value under key of group for ttl (0: the group's
// default): PUT of the key's path with the value as the body, its
// checksum, the TTL, and with a secret a signature over all of them.
func (c *Client) NewSetRequest(ctx context.Context, target, group, key string, value []byte, ttl time.Duration) Request {
	return c.newRequest(ctx, methodPut, target, group, key, value, ttl)
}

// newRequest builds and signs a peer request.
func (c *Client) newRequest(ctx context.Context, method, target, group, key string, body []byte, ttl time.Duration) Request {
	path := Path(group, key)
	h := Header{HeaderPeer: {"1"}}
	if method == methodPut {
		h.Set(HeaderChecksum, checksum(c.cfg.Secret, body))
		if t := FormatTTL(ttl); t != "" {
			h.Set(HeaderTTL, t)
		}
	}
	return c.request(ctx, method, target, path, h, body)
}

// write answers a DELETE or PUT of key in g, which admit has let through:
// a peer request (a node's Group.Remove and Group.Set send them), signed
// when the cluster has a secret, or accepted unsigned with UnsignedWrites.
func (s *Server) write(ctx context.Context, req Request, g *cache.Group, key string) Response {
	if req.Method == methodDelete {
		if err := s.reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpRemove, Group: g.Name(), Keys: []string{key}}, noAnswers{}); err != nil {
			return s.peerError(err)
		}
		return Response{Status: statusOK, Header: Header{}}
	}
	if n := int64(len(req.Body)); n > s.cfg.MaxValueBytes {
		return ErrorResponse(CodeTooLarge, fmt.Sprintf("value of %d bytes exceeds the limit of %d bytes", n, s.cfg.MaxValueBytes))
	}
	if err := checkBody(s.cfg.Secret, req.Header, req.Body); err != nil || Field(req.Header, HeaderChecksum) == "" {
		return ErrorResponse(CodeBadRequest, fmt.Sprintf("the value does not match its %s", HeaderChecksum))
	}
	set := cache.PeerRequest{Op: cache.OpSet, Group: g.Name(), Keys: []string{key}, Value: req.Body, TTL: max(ResponseTTL(req.Header), 0)}
	if err := s.reg.ServePeer(ctx, set, noAnswers{}); err != nil {
		return s.peerError(err)
	}
	s.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "geecache: set by a peer",
		slog.String("group", g.Name()), slog.String("key", clip(key)), slog.Int("bytes", len(req.Body)))
	return Response{Status: statusOK, Header: Header{}}
}
