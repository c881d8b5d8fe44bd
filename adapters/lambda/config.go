package lambda

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/cache"
)

// Names of the environment variables a Lambda node reads at start-up (see
// ConfigFromEnv).
const (
	EnvSelfURL       = "GEECACHE_SELF_URL"        // this node's name in EnvPeers (default: AWS_LAMBDA_FUNCTION_NAME)
	EnvPeers         = "GEECACHE_PEERS"           // required: comma-separated names (functions or URLs) of all nodes
	EnvQualifier     = "GEECACHE_QUALIFIER"       // optional: version or alias invoked on peers named by function
	EnvEndpoints     = "GEECACHE_LOCAL_ENDPOINTS" // optional, local runs only: name=URL pairs of emulators
	EnvSecret        = "GEECACHE_SECRET"          // optional: shared secret for request signing
	EnvCacheBytes    = "GEECACHE_CACHE_BYTES"     // optional: cache size per group, bytes (default 64 MiB)
	EnvMaxValueBytes = "GEECACHE_MAX_VALUE_BYTES" // optional: largest value served or fetched (default and cap: MaxValueBytes, or MaxStreamValueBytes when streaming)
	EnvInvokeMode    = "GEECACHE_INVOKE_MODE"     // optional: BUFFERED (default) or RESPONSE_STREAM
	EnvBasePath      = "GEECACHE_BASE_PATH"       // optional: path prefix before /_geecache/, such as an API Gateway stage
	EnvURLAuth       = "GEECACHE_URL_AUTH"        // optional: NONE (default) or AWS_IAM: sign requests to peers named by URL
	// EnvUnsignedWrites, optional: true to take PUT and DELETE without
	// GEECACHE_SECRET (Config.UnsignedWrites); false by default.
	EnvUnsignedWrites = "GEECACHE_UNSIGNED_WRITES"
)

// Invoke modes of a Function URL (the InvokeMode of its configuration).
const (
	ModeBuffered = "BUFFERED"
	ModeStream   = "RESPONSE_STREAM"
)

// Auth types of peers' Function URLs (Config.URLAuth).
const (
	AuthNone = "NONE"
	AuthIAM  = "AWS_IAM"
)

// DefaultCacheBytes is the cache size per group when EnvCacheBytes is unset.
const DefaultCacheBytes = 64 << 20

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
	// InvokeOptions.Resolve). Empty in a deployment.
	Endpoints map[string]string
	// Secret, if not empty, signs requests to peers and is required of
	// requests from them.
	Secret []byte
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
	// (each group's size is set when the user creates it).
	CacheBytes int64
	// MaxValueBytes is the largest value the node serves or fetches: at
	// most MaxValueBytes in BUFFERED mode (the default), MaxStreamValueBytes
	// in RESPONSE_STREAM mode; 0, or more than the cap, means the cap.
	MaxValueBytes int64
	// Mode is ModeBuffered or ModeStream ("" means ModeBuffered; NewNode
	// refuses any other value).
	Mode string
	// URLAuth is AuthIAM if the node signs its requests to peers named by
	// URL with SigV4 (SigV4Transport with the environment's credentials),
	// as Function URLs with AuthType AWS_IAM require; AuthNone (or "")
	// otherwise. NewNode refuses any other value.
	URLAuth string
	// BasePath is a path prefix the node's Handler removes (see
	// HandlerOptions.BasePath), such as "/prod" behind an API Gateway
	// stage.
	BasePath string
}

// ConfigFromEnv reads a Config from the environment through lookup, which
// is os.LookupEnv in production (a map in tests). Errors wrap cache.ErrConfig and
// name the variable at fault.
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	c := Config{CacheBytes: DefaultCacheBytes, MaxValueBytes: MaxValueBytes, Mode: ModeBuffered}
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("geecache: %w: %s: %s", cache.ErrConfig, name, fmt.Sprintf(format, args...)))
	}
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}

	self := get(EnvSelfURL)
	if self == "" {
		self = get("AWS_LAMBDA_FUNCTION_NAME")
	}
	if self == "" {
		bad(EnvSelfURL, "not set, nor AWS_LAMBDA_FUNCTION_NAME (this node's function name or Function URL, as listed in %s)", EnvPeers)
	} else if u, err := checkURL(self); err != nil {
		errs = append(errs, fmt.Errorf("%w, in %s", err, EnvSelfURL))
	} else {
		c.SelfURL = u
	}

	peers := get(EnvPeers)
	if peers == "" {
		bad(EnvPeers, "not set (comma-separated function names or URLs of every node, this one included)")
	} else {
		seen := make(map[string]bool)
		for p := range strings.SplitSeq(peers, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			u, err := checkURL(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w, in %s", err, EnvPeers))
				continue
			}
			if seen[u] {
				bad(EnvPeers, "%q listed twice", u)
				continue
			}
			seen[u] = true
			c.Peers = append(c.Peers, u)
		}
		if len(c.Peers) == 0 {
			bad(EnvPeers, "no URL in %q", peers)
		} else if c.SelfURL != "" && !seen[c.SelfURL] {
			bad(EnvPeers, "does not include %s %q (every node must get the same list)", EnvSelfURL, c.SelfURL)
		}
	}

	if s, ok := lookup(EnvSecret); ok && s != "" {
		c.Secret = []byte(s)
	}
	if v := get(EnvUnsignedWrites); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(EnvUnsignedWrites, "%q is neither true nor false", v)
		}
		c.UnsignedWrites = b
	}
	if v := get(EnvCacheBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			bad(EnvCacheBytes, "%q is not a byte count (a whole number >= 0)", v)
		} else {
			c.CacheBytes = n
		}
	}
	switch v := strings.ToUpper(get(EnvInvokeMode)); v {
	case "", ModeBuffered:
	case ModeStream:
		c.Mode = ModeStream
		c.MaxValueBytes = MaxStreamValueBytes
	default:
		bad(EnvInvokeMode, "%q is neither %s nor %s", v, ModeBuffered, ModeStream)
	}
	if v := get(EnvMaxValueBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil || n <= 0:
			bad(EnvMaxValueBytes, "%q is not a byte count (a whole number > 0)", v)
		case n > c.valueCap():
			bad(EnvMaxValueBytes, "%d is over %d, the most a Lambda response in %s mode can carry", n, c.valueCap(), c.Mode)
		default:
			c.MaxValueBytes = n
		}
	}
	switch v := strings.ToUpper(get(EnvURLAuth)); v {
	case "", AuthNone:
		c.URLAuth = AuthNone
	case AuthIAM:
		c.URLAuth = AuthIAM
	default:
		bad(EnvURLAuth, "%q is neither %s nor %s", v, AuthNone, AuthIAM)
	}
	c.BasePath = get(EnvBasePath)
	if err := checkBasePath(c.BasePath); err != nil {
		bad(EnvBasePath, "%q must start with \"/\" and have no trailing \"/\", query or fragment", c.BasePath)
	}
	c.Qualifier = get(EnvQualifier)
	if c.Qualifier != "" && !IsFunctionName("f:"+c.Qualifier) {
		bad(EnvQualifier, "%q is not a version or alias", c.Qualifier)
	}
	if v := get(EnvEndpoints); v != "" {
		c.Endpoints = make(map[string]string)
		for pair := range strings.SplitSeq(v, ",") {
			name, ep, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || name == "" || (!strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://")) {
				bad(EnvEndpoints, "%q is not name=http(s)://host:port", pair)
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

// check refuses a Mode or URLAuth that NewNode would not know (a Config
// written in code; ConfigFromEnv checks the variables itself), and sets
// their defaults for "".
func (c *Config) check() error {
	var errs []error
	switch c.Mode {
	case "":
		c.Mode = ModeBuffered
	case ModeBuffered, ModeStream:
	default:
		errs = append(errs, fmt.Errorf("geecache: %w: Config.Mode %q is neither %s nor %s", cache.ErrConfig, c.Mode, ModeBuffered, ModeStream))
	}
	switch c.URLAuth {
	case "":
		c.URLAuth = AuthNone
	case AuthNone, AuthIAM:
	default:
		errs = append(errs, fmt.Errorf("geecache: %w: Config.URLAuth %q is neither %s nor %s", cache.ErrConfig, c.URLAuth, AuthNone, AuthIAM))
	}
	return errors.Join(errs...)
}

// valueCap is the largest value a response in the node's mode can carry.
func (c *Config) valueCap() int64 {
	if c.Mode == ModeStream {
		return MaxStreamValueBytes
	}
	return MaxValueBytes
}

// checkURL checks a peer name: a function name as it is, a base URL
// normalised as every binding does (peerhttp.NormalizeURL), so that Lambda
// and net/http nodes name a node alike on the ring. Its error wraps
// cache.ErrConfig, as NormalizeURL's does.
func checkURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		if !IsFunctionName(s) {
			return "", fmt.Errorf("geecache: %w: %q is neither an http(s) URL nor a Lambda function name or ARN", cache.ErrConfig, s)
		}
		return s, nil
	}
	return peerhttp.NormalizeURL(s)
}
