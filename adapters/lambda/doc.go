// Package lambda runs GeeCache nodes as AWS Lambda functions behind
// Function URLs, and serves them locally under the Lambda runtime emulator.
//
// A Lambda node speaks the same peer protocol as a net/http node (package
// protocol does the work for both), so the two kinds of nodes serve each
// other in one cluster. Its parts:
//
//   - Handler turns Function URL events into protocol requests and back:
//     ServeURL for the BUFFERED invoke mode (a Function URL's default),
//     ServeStream for RESPONSE_STREAM. Responses carry the value base64 with
//     IsBase64Encoded, so any bytes survive; a value that would not fit the
//     6 MiB response (MaxValueBytes, about 4.4 MiB of value) is refused with
//     413 rather than cut off.
//   - Start is the entry point of a node's main: it reads the configuration
//     from the environment, lets the caller add its groups with the node's
//     peer picker, and starts the Lambda runtime loop. NewNode does the same
//     without the loop. Peers are reached through a nethttp.Pool built from
//     Options.Peers, exactly as a net/http node builds its own, so both
//     kinds of node agree on who owns a key.
//
// Package lambdatest runs nodes locally: a Front stands in for a Function
// URL before a Lambda runtime endpoint (aws-lambda-rie, or an in-process
// runtime for tests).
//
// Errors sent to callers that are not peers are generic by default (the
// detail goes to the log), since a Function URL may be reachable by anyone;
// Options.ShowErrors turns the detail back on.
//
// # Configuration
//
// Start reads these environment variables (ConfigFromEnv):
//
//	GEECACHE_SELF_URL        required  this node's Function URL, as listed in GEECACHE_PEERS
//	GEECACHE_PEERS           required  comma-separated Function URLs of every node, this one included
//	GEECACHE_SECRET          optional  shared secret; requests and responses between nodes are signed (HMAC)
//	GEECACHE_CACHE_BYTES     optional  cache size per group in bytes (default 64 MiB)
//	GEECACHE_MAX_VALUE_BYTES optional  largest value served or fetched (default and cap MaxValueBytes)
//	GEECACHE_INVOKE_MODE     optional  BUFFERED (default) or RESPONSE_STREAM, as the URL is configured
//
// A missing or malformed variable is a start-up error naming it; Start
// returns it before the runtime loop begins, and the function's init fails
// visibly in its logs.
//
// Peers reach a Lambda node through its Function URL, which is plain HTTPS
// to them, so the net/http client of package nethttp fetches from peers of
// both kinds. A Function URL with AuthType NONE is open to the internet:
// set GEECACHE_SECRET so that only signed requests load anything. A signed
// request is bound to the node it is sent to (GEECACHE_SELF_URL, exactly as
// the other nodes list it in GEECACHE_PEERS), and every answer carries a
// checksum and, with the secret, a signature (protocol version 2, see
// adapters/PROTOCOL.md).
//
// A Lambda node serves the protocol at the root of its URL (the Function
// URL's rawPath, still percent-encoded as sent, is the protocol path), so
// give peers no base path for it. Put it behind a Function URL, not an API
// Gateway HTTP API: the latter decodes rawPath, and keys containing "/" or
// "%" would then no longer round-trip.
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
//     local emulator, more through a real Function URL).
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
// instance (examples/lambda/localfront is one as a command):
//
//	CGO_ENABLED=0 GOOS=linux go build -tags lambda.norpc -o bin/bootstrap ./examples/lambda
//	aws-lambda-rie --runtime-interface-emulator-address 127.0.0.1:9001 \
//		--runtime-api-address 127.0.0.1:9101 --log-level error bin/bootstrap
//
// examples/lambda has a deployment recipe, and scripts/lambda-integration.sh
// runs the integration test of this package under the emulator.
package lambda
