// Package workers is a Cloudflare Worker that runs the GeeCache node of
// examples/wasm (worker.mjs, and config.capnp for workerd, the Workers
// runtime, locally), and Durable Objects as ring nodes (objects.mjs,
// objects.capnp). It has no Go code of its own: its tests build
// examples/wasm for js/wasm and run each under workerd beside net/http
// nodes. See README.md.
package workers
