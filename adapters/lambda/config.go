//go:build !js

package lambda

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// Names of the environment variables a Lambda node reads at start-up: the
// table in the package doc says what each one means (ConfigFromEnv).
const (
	envSelfURL        = "GEECACHE_SELF_URL"
	envPeers          = "GEECACHE_PEERS"
	envQualifier      = "GEECACHE_QUALIFIER"
	envEndpoints      = "GEECACHE_LOCAL_ENDPOINTS"
	envSecret         = "GEECACHE_SECRET"
	envCacheBytes     = "GEECACHE_CACHE_BYTES"
	envMaxValueBytes  = "GEECACHE_MAX_VALUE_BYTES"
	envInvokeMode     = "GEECACHE_INVOKE_MODE"
	envBasePath       = "GEECACHE_BASE_PATH"
	envURLAuth        = "GEECACHE_URL_AUTH"
	envUnsignedWrites = "GEECACHE_UNSIGNED_WRITES"
)

// Values of GEECACHE_INVOKE_MODE (a Function URL's InvokeMode) and of
// GEECACHE_URL_AUTH (the AuthType of the peers' Function URLs).
const (
	modeBuffered = "BUFFERED"
	modeStream   = "RESPONSE_STREAM"
	authNone     = "NONE"
	authIAM      = "AWS_IAM"
)

// defaultCacheBytes is the cache size per group when GEECACHE_CACHE_BYTES
// is unset: 64 MiB.
const defaultCacheBytes = 64 << 20

// Config is a Lambda node's configuration.
type Config struct {
	// SelfURL is this node's name on the ring, exactly as it appears in
	// Peers: its function name when peers invoke it through the Lambda
	// API, or its Function URL when they call that.
	SelfURL string
	// Peers are the names of every node, this one included: function
	// names or ARNs (reached through the Invoke API) and http(s) base URLs
	// (Function URLs, net/http nodes). Every node must be given the same
	// list, so that they agree on key owners.
	Peers []string
	// Qualifier is the version or alias invoked on peers named by
	// function ("" for the unqualified function, $LATEST).
	Qualifier string
	// Endpoints maps peer names to the Lambda API endpoint that serves
	// them, for local runs under the Runtime Interface Emulator, which
	// serves one function, named "function", per process (see
	// PeersOptions.Resolve). Empty in a deployment.
	Endpoints map[string]string
	// UnsignedWrites makes a node without a Secret take PUT and DELETE
	// (its peers' Group.Set and Group.Remove) unsigned. Off by default:
	// without a secret anyone who can reach the node (a Function URL
	// with AuthType NONE is open to the internet) could replace or drop
	// its values, so writes are refused (401). Turn it on only where IAM
	// authenticates every caller before the function runs: peers named
	// by function (the Invoke API) and Function URLs with AuthType
	// AWS_IAM. With a Secret it changes nothing: writes must be signed.
	UnsignedWrites bool
	// CacheBytes is the cache size a node's groups are meant to use
	// (each group's size is set when the user creates it). ConfigFromEnv
	// sets 64 MiB when GEECACHE_CACHE_BYTES is unset.
	CacheBytes int64
	// Stream is true if the node's Function URL has InvokeMode
	// RESPONSE_STREAM (Start then serves Node.ServeStream), false for
	// BUFFERED, a Function URL's default (Node.ServeURL).
	Stream bool
	// URLAuthIAM makes the node sign its requests to peers named by URL
	// with SigV4 (NewSigV4Transport's, with the environment's credentials),
	// as Function URLs with AuthType AWS_IAM require.
	URLAuthIAM bool
	// Cluster is what every node of the cluster, of any binding, is
	// given alike (see nethttp.Cluster). ConfigFromEnv reads its Secret,
	// MaxValueBytes and BasePath; Replicas and Hash are not in the
	// environment (0 and nil, the defaults): a node that needs others sets
	// them on the Config it gives NewNode. On a Lambda node:
	//
	//   - Secret, if not empty, signs requests to peers and is required of
	//     requests from them.
	//   - MaxValueBytes is the largest value the node serves or fetches.
	//     Its cap, and the meaning of 0 or of more than the cap, is what
	//     one Lambda response can carry: 4,712,448 bytes in BUFFERED mode
	//     (a 6 MiB response JSON, less 8 KiB for status and headers, with
	//     the value in base64), 199,991,808 bytes when Stream is set
	//     (Lambda's documented 200 MB maximum for a streamed response,
	//     less the same 8 KiB).
	//   - BasePath is a path prefix in front of the protocol's paths, such
	//     as "/prod" for an API Gateway stage or "/cache" for a route: the
	//     node removes it from a request's path before the protocol reads
	//     it, and asks its peers named by URL under it. It must start with
	//     "/" and not end with one (NewNode refuses it otherwise). A path
	//     without the prefix is served as it is, so that peers, whose
	//     Invoke events carry none, need not know it. "" (the default)
	//     means no prefix.
	Cluster nethttp.Cluster
}

// ConfigFromEnv reads a Config from the environment through lookup, which
// is os.LookupEnv in production (a map in tests): the variables in the
// table of the package doc. Errors wrap cache.ErrConfig and name the variable at
// fault.
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	c := Config{CacheBytes: defaultCacheBytes, Cluster: nethttp.Cluster{MaxValueBytes: maxValueBytes}}
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("geecache: %w: %s: %s", cache.ErrConfig, name, fmt.Sprintf(format, args...)))
	}
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}

	self := get(envSelfURL)
	if self == "" {
		self = get("AWS_LAMBDA_FUNCTION_NAME")
	}
	if self == "" {
		bad(envSelfURL, "not set, nor AWS_LAMBDA_FUNCTION_NAME (this node's function name or Function URL, as listed in %s)", envPeers)
	} else if u, err := normalizeName(self); err != nil {
		errs = append(errs, fmt.Errorf("%w, in %s", err, envSelfURL))
	} else {
		c.SelfURL = u
	}

	peers := get(envPeers)
	if peers == "" {
		bad(envPeers, "not set (comma-separated function names or URLs of every node, this one included)")
	} else {
		seen := make(map[string]bool)
		for p := range strings.SplitSeq(peers, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			u, err := normalizeName(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w, in %s", err, envPeers))
				continue
			}
			if seen[u] {
				bad(envPeers, "%q listed twice", u)
				continue
			}
			seen[u] = true
			c.Peers = append(c.Peers, u)
		}
		if len(c.Peers) == 0 {
			bad(envPeers, "no URL in %q", peers)
		} else if c.SelfURL != "" && !seen[c.SelfURL] {
			bad(envPeers, "does not include %s %q (every node must get the same list)", envSelfURL, c.SelfURL)
		}
	}

	if s, ok := lookup(envSecret); ok && s != "" {
		c.Cluster.Secret = []byte(s)
	}
	if v := get(envUnsignedWrites); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(envUnsignedWrites, "%q is neither true nor false", v)
		}
		c.UnsignedWrites = b
	}
	if v := get(envCacheBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			bad(envCacheBytes, "%q is not a byte count (a whole number >= 0)", v)
		} else {
			c.CacheBytes = n
		}
	}
	switch v := strings.ToUpper(get(envInvokeMode)); v {
	case "", modeBuffered:
	case modeStream:
		c.Stream = true
		c.Cluster.MaxValueBytes = maxStreamValueBytes
	default:
		bad(envInvokeMode, "%q is neither %s nor %s", v, modeBuffered, modeStream)
	}
	if v := get(envMaxValueBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil || n <= 0:
			bad(envMaxValueBytes, "%q is not a byte count (a whole number > 0)", v)
		case n > c.valueCap():
			bad(envMaxValueBytes, "%d is over %d, the most a Lambda response in %s mode can carry", n, c.valueCap(), c.mode())
		default:
			c.Cluster.MaxValueBytes = n
		}
	}
	switch v := strings.ToUpper(get(envURLAuth)); v {
	case "", authNone:
	case authIAM:
		c.URLAuthIAM = true
	default:
		bad(envURLAuth, "%q is neither %s nor %s", v, authNone, authIAM)
	}
	c.Cluster.BasePath = get(envBasePath)
	if err := peerhttp.CheckBasePath(c.Cluster.BasePath); err != nil {
		bad(envBasePath, "%q must start with \"/\" and have no trailing \"/\", query or fragment", c.Cluster.BasePath)
	}
	c.Qualifier = get(envQualifier)
	if c.Qualifier != "" && !isFunctionName("f:"+c.Qualifier) {
		bad(envQualifier, "%q is not a version or alias", c.Qualifier)
	}
	if v := get(envEndpoints); v != "" {
		c.Endpoints = make(map[string]string)
		for pair := range strings.SplitSeq(v, ",") {
			name, ep, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || name == "" || (!strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://")) {
				bad(envEndpoints, "%q is not name=http(s)://host:port", pair)
				continue
			}
			if !slices.Contains(c.Peers, name) {
				// A typo would send that peer's invokes to the real
				// Lambda API instead of its emulator.
				bad(envEndpoints, "%q names no peer of %s", name, envPeers)
				continue
			}
			c.Endpoints[name] = ep
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

// mode names the node's invoke mode as GEECACHE_INVOKE_MODE does.
func (c *Config) mode() string {
	if c.Stream {
		return modeStream
	}
	return modeBuffered
}

// valueCap is the largest value a response in the node's mode can carry.
func (c *Config) valueCap() int64 {
	if c.Stream {
		return maxStreamValueBytes
	}
	return maxValueBytes
}
