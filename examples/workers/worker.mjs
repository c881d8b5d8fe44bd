// worker.mjs: a Cloudflare Worker (run locally by workerd, Cloudflare's
// runtime) that runs the GeeCache node of examples/wasm, compiled to
// js/wasm. See README.md for what a Worker is in a cluster.
//
// Three things workerd refuses shape this file (the third: see awake): a Worker may not compile
// wasm from bytes ("Wasm code generation disallowed by embedder"), so the
// node is imported as a compiled module (a `wasm` module in config.capnp,
// a CompiledWasm rule under wrangler); and it may not do work that needs
// randomness in the global scope ("Disallowed operation called within
// global scope"), which Go's runtime does as it starts, so the program is
// started inside the first request and shared by the requests after it.
//
// Bindings (env): GEECACHE_SECRET, the cluster's peer secret (a Workers
// secret: `wrangler secret put GEECACHE_SECRET`; config.capnp takes it
// from workerd's environment); PEERS, the other nodes' base URLs,
// comma-separated; SELF, this Worker's own base URL if it is a member of
// the ring (leave it unset on Cloudflare: see README.md).
//
// Routes: /_geecache/... the peer protocol; GET /api?key=K[&group=echo]
// the key's value from the cluster; GET /stats the node's counters.
import "./wasm_exec.js"; // sets globalThis.Go
import nodeWasm from "./node.wasm"; // a WebAssembly.Module
import { batcher, serveFetch } from "./batch.mjs"; // examples/wasm's, the batching the hosts share

let node = null; // a Promise of the node's functions, from the first request

function start(env) {
  const go = new Go();
  go.argv = ["node.wasm"];
  if (env.SELF) go.argv.push(`-self=${env.SELF}`);
  if (env.PEERS) go.argv.push(`-peers=${env.PEERS}`);
  go.env = { GEECACHE_SECRET: env.GEECACHE_SECRET ?? "" };
  return new Promise((ready, fail) => {
    // The program calls it once it is set up. The peer requests of one
    // turn of the isolate's event loop go to the node in one call.
    globalThis.geecacheReady = (node) => ready({ node, submit: batcher(node, { ownContext: true }) });
    WebAssembly.instantiate(nodeWasm, go.importObject)
      .then((instance) => go.run(instance))
      .then(() => fail(new Error("the GeeCache node exited")), fail);
  });
}


const text = (status, body) => new Response(body, { status, headers: { "Content-Type": "text/plain" } });

// awake runs p to its end with a timer pending in this request: workerd
// cancels a request that has nothing pending of its own ("your Worker's
// code had hung"), and a request whose answer another request's fetch
// brings (the node loads each key once: the others wait for it) has none.
async function awake(p) {
  const t = setInterval(() => {}, 100);
  try {
    return await p;
  } finally {
    clearInterval(t);
  }
}

export default {
  async fetch(req, env) {
    node ??= start(env);
    let geecache, submit;
    try {
      ({ node: geecache, submit } = await awake(node)); // the first request may still be starting it
    } catch (err) {
      node = null; // the next request tries again
      return text(500, `starting the GeeCache node: ${err}\n`);
    }
    const u = new URL(req.url); // pathname stays percent-encoded, as sent
    if (u.pathname.startsWith("/_geecache/")) {
      const r = await awake(serveFetch(submit, geecache, req, u.pathname));
      return new Response(r.body, { status: r.status, headers: r.headers });
    }
    if (req.method === "GET" && u.pathname === "/api") {
      const key = u.searchParams.get("key");
      if (key === null) return text(400, "missing key parameter: use /api?key=NAME\n");
      const r = await awake(geecache.get(key, u.searchParams.get("group") ?? ""));
      return new Response(r.body, { status: r.status, headers: { "Content-Type": r.status === 200 ? "application/octet-stream" : "text/plain" } });
    }
    if (req.method === "GET" && u.pathname === "/stats") {
      return new Response(await awake(geecache.stats()), { headers: { "Content-Type": "application/json" } });
    }
    return text(404, "not found\n");
  },
};
