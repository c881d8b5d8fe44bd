// objects.mjs: a Worker fronting N Durable Objects, each one GeeCache node
// (the js/wasm node of examples/wasm) that owns its share of the ring. Run
// locally by workerd with objects.capnp; see README.md for what it costs
// and when it fits.
//
// A Durable Object is the addressable unit of Workers: one instance per
// name, reached through its stub (env.NODES.get(id).fetch(...)). Node i is
// the object named "node-i"; its address in the ring is
// http://geecache-node-i, a name that exists only inside this Worker: the
// nodes' fetch() of such a URL goes to that object's stub, never to the
// network. The peer protocol between them is the usual one, signed with
// the GEECACHE_SECRET binding.
//
// Routes of the front Worker: /node/I/api?key=K[&group=echo] and
// /node/I/stats (node I's API and counters), /api?key=K (any node's).
// The peer protocol (/_geecache/...) is not routed from outside.
import "./wasm_exec.js"; // sets globalThis.Go
import nodeWasm from "./node.wasm"; // a WebAssembly.Module
import { batcher, serveFetch } from "./batch.mjs"; // examples/wasm's, the batching the hosts share

const HOST = /^geecache-node-(\d+)$/;

function count(env) {
  const n = Number(env.NODES_COUNT);
  if (!Number.isInteger(n) || n < 1) throw new Error(`NODES_COUNT must be a positive integer, not ${env.NODES_COUNT}`);
  return n;
}

function stub(env, i) {
  return env.NODES.get(env.NODES.idFromName(`node-${i}`));
}

// routeFetch returns globalThis.fetch with the ring's addresses sent to
// the objects' stubs. It is installed once per isolate, where the first
// object starts (not at module load: it needs env).
function routeFetch(env, fetch) {
  return (input, init) => {
    const req = new Request(input, init);
    const m = HOST.exec(new URL(req.url).hostname);
    return m ? stub(env, Number(m[1])).fetch(req) : fetch(req);
  };
}


// Go programs are started one at a time: each calls the one global
// geecacheReady as it starts.
let starting = Promise.resolve();

export class GeeCacheNode {
  constructor(state, env) {
    this.env = env;
    this.node = null; // a Promise of this object's node, from its first request
  }

  start(self) {
    const env = this.env;
    const n = count(env);
    if (!globalThis.geecacheRouted) {
      globalThis.fetch = routeFetch(env, globalThis.fetch.bind(globalThis));
      globalThis.geecacheRouted = true;
    }
    const peers = [];
    for (let i = 0; i < n; i++) peers.push(`http://geecache-node-${i}`);
    const go = new Go();
    go.argv = ["node.wasm", `-self=${self}`, `-peers=${peers.join(",")}`];
    if (env.DELAY) go.argv.push(`-delay=${env.DELAY}`); // the slow database's time per lookup
    go.env = { GEECACHE_SECRET: env.GEECACHE_SECRET ?? "" };
    const started = starting.then(() => new Promise((ready, fail) => {
      // The peer requests of one turn of the event loop go to the node
      // in one call.
      globalThis.geecacheReady = (node) => ready({ node, submit: batcher(node, { ownContext: true }) });
      WebAssembly.instantiate(nodeWasm, go.importObject)
        .then((instance) => go.run(instance))
        .then(() => fail(new Error("the GeeCache node exited")), fail);
    }));
    starting = started.catch(() => {});
    return started;
  }

  async fetch(req) {
    const u = new URL(req.url);
    this.node ??= this.start(u.origin); // the front and the peers call http://geecache-node-I
    let geecache, submit;
    try {
      ({ node: geecache, submit } = await this.node);
    } catch (err) {
      this.node = null;
      return new Response(`starting the GeeCache node: ${err}\n`, { status: 500 });
    }
    if (u.pathname.startsWith("/_geecache/")) {
      const r = await serveFetch(submit, geecache, req, u.pathname);
      return new Response(r.body, { status: r.status, headers: r.headers });
    }
    if (u.pathname === "/api") {
      const r = await geecache.get(u.searchParams.get("key") ?? "", u.searchParams.get("group") ?? "");
      return new Response(r.body, { status: r.status });
    }
    if (u.pathname === "/stats") return new Response(await geecache.stats(), { headers: { "Content-Type": "application/json" } });
    return new Response("not found\n", { status: 404 });
  }
}

export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    const n = count(env);
    let i, rest;
    const m = /^\/node\/(\d+)(\/.*)$/.exec(u.pathname);
    if (m) [i, rest] = [Number(m[1]), m[2]];
    else [i, rest] = [Math.floor(Math.random() * n), u.pathname];
    if (i >= n || (rest !== "/api" && rest !== "/stats")) return new Response("not found\n", { status: 404 });
    if (req.method !== "GET") return new Response("method not allowed\n", { status: 405 });
    return stub(env, i).fetch(`http://geecache-node-${i}${rest}${u.search}`);
  },
};
