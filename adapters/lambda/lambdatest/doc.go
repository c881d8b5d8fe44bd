// Package lambdatest runs GeeCache's AWS Lambda nodes locally, for tests
// and development: a Front plays a Function URL in front of Lambda runtime
// invoke endpoints (the Runtime Interface Emulator, aws-lambda-rie, or an
// in-process runtime from NewRuntime), turning plain HTTP requests into
// the events a Function URL sends and the function's answers back into
// HTTP.
//
// A deployed node does not use this package; it is kept apart from
// package lambda so that the production package's API is what a node in
// AWS uses.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/testing.md
package lambdatest
