//go:build !js

package lambda

import (
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// protocolPath returns the escaped protocol path of ev, without the base
// path.
//
// A Function URL passes rawPath as the client sent it, still escaped, and
// so do a peer's Invoke event and a local Front. An API Gateway HTTP API
// (payload 2.0, the same event shape) passes it decoded once: a key "a/b",
// sent as "a%2Fb", arrives as "a/b". Read as escaped, such a path would
// name a wrong key ("a%2Fb" would become "a/b") or none. So an event that
// did not come through a Function URL (its requestContext.domainName is
// not <url-id>.lambda-url.<region>.on.aws, nor a loopback or empty host)
// is taken as decoded: its first segment after the prefix is the group,
// the whole rest is the key, and both are escaped again. Group names
// containing "/" cannot be reached that way; a path that does not split
// into a group and a key is refused with an error that says why. So is a
// group or key "!." or "!.." (and a key "!./" or "!../"): the protocol's
// form of "." and ".." and the key "!." itself (sent as "%21.") arrive the
// same once decoded, so either reading could serve the wrong key; refused,
// the caller loads such a key itself.
func (h *handler) protocolPath(ev *events.LambdaFunctionURLRequest) (string, error) {
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if h.base != "" && strings.HasPrefix(path, h.base+"/") {
		path = path[len(h.base):]
	}
	if !decodedPath(ev) {
		return path, nil
	}
	rest, ok := strings.CutPrefix(path, protocol.Prefix)
	group, key, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || group == "" {
		return "", fmt.Errorf("API Gateway event (decoded path) %q is not [base path]%s{group}/{key}", clipPath(path), protocol.Prefix)
	}
	if dotMarked(group) || dotMarked(strings.TrimSuffix(key, "/")) {
		return "", fmt.Errorf("API Gateway event (decoded path) %q: %q is ambiguous once decoded (the key \".\" or \"..\", or itself); send it through a Function URL", clipPath(path), clipPath(rest))
	}
	return protocol.Path(group, key), nil
}

// dotMarked reports whether s is "!." or "!..", the protocol's escaped
// form of the dot segments, as it arrives decoded.
func dotMarked(s string) bool { return s == "!." || s == "!.." }

// decodedPath reports whether ev's rawPath has been decoded on its way,
// as an API Gateway HTTP API does and a Function URL does not.
func decodedPath(ev *events.LambdaFunctionURLRequest) bool {
	d := ev.RequestContext.DomainName
	if d == "" || strings.Contains(d, ".lambda-url.") {
		return false
	}
	host := d
	if hp, _, err := net.SplitHostPort(d); err == nil {
		host = hp
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// clipPath shortens a path for an error message.
func clipPath(p string) string {
	if len(p) > 200 {
		return p[:200] + "…"
	}
	return p
}
