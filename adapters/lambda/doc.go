//go:build !js

// Package lambda runs GeeCache nodes as AWS Lambda functions, reached by
// their peers through the Lambda Invoke API (authenticated by IAM) or
// through Function URLs, and serves them locally under the Lambda runtime
// emulator. A function is a Linux program, so the package is not built for
// GOOS=js (where package nethttp has no net/http transport to lend it).
//
// A Lambda node speaks the same peer protocol as a net/http node (package
// protocol does the work for both), so the two kinds of nodes serve each
// other in one cluster. Its parts:
//
//   - A Node (NewNode, or Start in a function's main) turns Function URL
//     events (payload format 2.0) into protocol requests and back:
//     Node.ServeURL for the BUFFERED invoke mode (a Function URL's
//     default), Node.ServeStream for RESPONSE_STREAM (Config.Stream).
//     Buffered responses carry the value base64 with IsBase64Encoded, so
//     any bytes survive; a value that would not fit the 6 MiB response
//     (4,712,448 bytes of value, about 4.5 MiB, see Config.Cluster) is refused with
//     413 rather than cut off. Streamed responses carry it raw, up to
//     about 200 MB (Lambda's documented maximum for a streamed response,
//     the first 6 MB at full speed and the rest at up to 2 MB/s:
//     https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html).
//     Config.Cluster.BasePath strips a prefix such as an API Gateway stage;
//     API Gateway HTTP API events, whose rawPath arrives decoded, are told
//     apart by their requestContext.domainName and escaped again, so a key
//     is never read as another.
//   - Peers is the peer picker: a picker.Peers, the peer set of every
//     binding (a nethttp.Pool has one too, so every kind of node given the
//     same nethttp.Cluster agrees on owners), whose members are function
//     names or ARNs, fetched from through the Invoke API, or http(s) URLs,
//     fetched from with a nethttp.Client. What every node shares is a
//     nethttp.Cluster (Config.Cluster, PeersOptions.Cluster); PeerOptions
//     says how this node reaches its peers (the same struct in a node's
//     Options and in PeersOptions).
//     Peers named by function need no URL and no shared secret: IAM
//     authenticates the caller (lambda:InvokeFunction on the peer), and the
//     names are known before a deploy. A net/http node uses a Peers to
//     reach Lambda nodes. Throttling (ErrThrottled) and function errors
//     (ErrFunctionError) are peer failures: the calling group loads the key
//     itself, and ejects a peer that keeps failing (cache.PeerPolicy).
//   - NewSigV4Transport signs requests for Function URLs whose AuthType is
//     AWS_IAM; set it as the Transport of a nethttp.Pool, a nethttp.Client
//     or a PeerOptions (Config.URLAuthIAM does it for a node).
//   - Start is the entry point of a node's main: it reads the configuration
//     from the environment, lets the caller add its groups with the node's
//     peer picker, and starts the Lambda runtime loop. NewNode does the same
//     without the loop.
//
// The Lambda client of a node defaults to one with the credentials and
// region in the environment, which on Lambda are the function's role and
// region (see PeerOptions.Client). Package awsdefault loads the SDK's full
// default chain for programs that run elsewhere; it is a package of its
// own so that a node's binary does not carry it.
//
// Package lambdatest runs nodes locally: a Front stands in for a Function
// URL before a Lambda runtime endpoint (aws-lambda-rie, or an in-process
// runtime for tests), in either invoke mode.
//
// Errors sent to callers that did not sign are generic by default (the
// detail goes to the log), since a Function URL may be reachable by anyone;
// Options.ShowErrors turns the detail back on.
//
// # Configuration
//
// Start reads these environment variables (ConfigFromEnv) into the Config
// fields of the same names (GEECACHE_SECRET, GEECACHE_MAX_VALUE_BYTES and
// GEECACHE_BASE_PATH into Config.Cluster, the settings every node of the
// cluster shares; GEECACHE_INVOKE_MODE sets Config.Stream,
// GEECACHE_URL_AUTH Config.URLAuthIAM, GEECACHE_LOCAL_ENDPOINTS
// Config.Endpoints):
//
//	GEECACHE_PEERS           required  comma-separated names of every node, this one included:
//	                                   function names or ARNs (Invoke API) and http(s) URLs
//	GEECACHE_SELF_URL        optional  this node's name in GEECACHE_PEERS (default AWS_LAMBDA_FUNCTION_NAME,
//	                                   which Lambda sets); a Function URL for a node peers reach by URL
//	GEECACHE_QUALIFIER       optional  version or alias invoked on peers named by function
//	GEECACHE_SECRET          optional  shared secret; requests and responses between nodes are signed (HMAC). Not
//	                                   needed between nodes named by function: IAM authenticates them
//	GEECACHE_UNSIGNED_WRITES optional  true to take peers' PUT and DELETE (Set, Remove) without a secret;
//	                                   false by default: such writes are refused. Only where IAM
//	                                   authenticates every caller (Invoke API, URLs with AuthType AWS_IAM)
//	GEECACHE_CACHE_BYTES     optional  cache size per group in bytes (default 64 MiB)
//	GEECACHE_MAX_VALUE_BYTES optional  largest value served or fetched (default and cap 4712448,
//	                                   or 199991808 in RESPONSE_STREAM mode)
//	GEECACHE_INVOKE_MODE     optional  BUFFERED (default) or RESPONSE_STREAM, as the URL is configured
//	GEECACHE_BASE_PATH       optional  path prefix before /_geecache/, such as an API Gateway stage
//	                                   (peers named by URL are asked under it too)
//	GEECACHE_URL_AUTH        optional  NONE (default) or AWS_IAM: sign requests to peers named by URL
//	                                   (Function URLs with AuthType AWS_IAM) with SigV4
//	GEECACHE_LOCAL_ENDPOINTS optional  local runs only: name=URL pairs, the emulator serving each peer
//	                                   (each name one of GEECACHE_PEERS)
//
// A missing or malformed variable is a start-up error naming it; Start
// returns it before the runtime loop begins, and the function's init fails
// visibly in its logs.
//
// A peer named by URL reaches a Lambda node through its Function URL,
// which is plain HTTPS, with the net/http client of package nethttp. A
// Function URL with AuthType NONE is open to the internet: prefer AWS_IAM
// (GEECACHE_URL_AUTH), or set GEECACHE_SECRET so that only signed requests
// load anything. Without a secret a node refuses writes (PUT, DELETE)
// unless GEECACHE_UNSIGNED_WRITES=true asks for them unsigned, which is
// safe only where IAM authenticates every caller: peers named by function,
// Function URLs with AuthType AWS_IAM. A signed request is bound to the node it is sent to
// (GEECACHE_SELF_URL, exactly as the other nodes list it in GEECACHE_PEERS),
// and every answer carries a checksum and, with the secret, a signature
// (protocol version 2, see adapters/PROTOCOL.md).
//
// A Lambda node serves the protocol at the root of its URL (the Function
// URL's rawPath, still percent-encoded as sent, is the protocol path), so
// give peers no base path for it. Peers fetching through the Invoke API get
// at most a synchronous payload (6 MB) whatever the invoke mode; a larger
// value, possible in RESPONSE_STREAM mode, is loaded by the caller itself.
//
// # How a Lambda deployment behaves
//
// A function is not one process. Lambda runs one execution environment per
// concurrent request, each a separate process with its own memory, and
// starts and stops them as traffic comes and goes. So one function (one
// URL, one entry in the peer list) is one node of the ring, but a node with
// several private caches:
//
//   - A key is owned by one function, but each environment of that function
//     loads and caches it on its own. With N warm environments the owner
//     can hit the source up to N times for one key, and a request finds the
//     key cached only if it lands on an environment that has seen it. Hit
//     rates fall as concurrency rises, and duplicate loads are suppressed
//     per environment, not per function.
//   - Memory is lost when an environment is recycled (after minutes to
//     hours idle, on deployment, on scale-in), so a cold start is a cold
//     cache, too.
//   - Every request into a node, and every request from it to a peer, is
//     an invocation with its own cost and latency (about 1 ms warm on the
//     local emulator, more on AWS), and the calling function is billed for
//     its duration while it waits for the peer.
//
// Reserved concurrency caps the number of environments: with a cap of 1 a
// function is one process with one cache, as a net/http node is, at the
// price of throttling (429) when requests overlap. Provisioned concurrency
// keeps a number of environments initialised, so fewer requests meet a cold
// process and an empty cache; it does not make them share memory. Lambda
// is a reasonable home for a cache in front of a slow source with modest
// concurrency per node; for a high hit rate at high concurrency, long-lived
// net/http nodes are the better fit, and a mixed cluster can use both.
//
// # Running locally
//
// Build the function as Lambda does and run it under the Runtime Interface
// Emulator, with both of its addresses on 127.0.0.1 (it has no --help, and
// unknown flags make it listen on 0.0.0.0:8080), a different
// --runtime-api-address per instance, and a lambdatest.Front before each
// instance for requests by URL (examples/lambda/localfront is one as a
// command). The emulator serves one function, named "function", per
// process: GEECACHE_LOCAL_ENDPOINTS tells each node which emulator serves
// which peer, and any static AWS credentials and region will do:
//
//	CGO_ENABLED=0 GOOS=linux go build -tags lambda.norpc -o bin/bootstrap ./examples/lambda
//	aws-lambda-rie --runtime-interface-emulator-address 127.0.0.1:9001 \
//		--runtime-api-address 127.0.0.1:9101 --log-level error bin/bootstrap
//
// examples/lambda has a deployment recipe, and scripts/lambda-integration.sh
// runs the integration test of this package under the emulator.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/deploy-lambda.md
package lambda
