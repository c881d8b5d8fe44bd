// fetch.mjs runs a GeeCache node compiled to js/wasm in a host whose HTTP
// server speaks the Fetch API (Request in, Response out): Deno (Deno.serve)
// or Bun (Bun.serve). It is shim.js for those hosts, with the same flags,
// routes and ready line:
//
//   deno run --allow-net=127.0.0.1 --allow-read --allow-env fetch.mjs [--listen=HOST:PORT] [--wasm-exec=PATH] NODE.wasm [-- GO-FLAGS...]
//   bun fetch.mjs [--listen=HOST:PORT] [--wasm-exec=PATH] NODE.wasm [-- GO-FLAGS...]
//
// Routes: /_geecache/... the peer protocol (the node's serve function);
// GET /api?key=K[&group=echo] the key's value from the cluster; GET /stats
// the node's counters as JSON. SIGINT/SIGTERM stop it.

import { batcher, serveFetch } from "./batch.mjs"; // the batching the hosts share

const isDeno = typeof globalThis.Deno !== "undefined";
const isBun = typeof globalThis.Bun !== "undefined";
if (!isDeno && !isBun) throw new Error("fetch.mjs runs under Deno or Bun (node.js: use shim.js)");

function usage(msg) {
  console.error(`fetch.mjs: ${msg}\nusage: fetch.mjs [--listen=HOST:PORT] [--wasm-exec=PATH] NODE.wasm [-- GO-FLAGS...]`);
  exit(2);
}
function exit(code) { isDeno ? Deno.exit(code) : process.exit(code); }
const env = isDeno ? Deno.env.toObject() : { ...process.env };
const args = isDeno ? Deno.args : process.argv.slice(2);

let listen = "127.0.0.1:0";
let wasmExec = env.GOROOT ? `${env.GOROOT}/lib/wasm/wasm_exec.js` : "";
let wasmFile = "";
let goFlags = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--") { goFlags = args.slice(i + 1); break; }
  if (a.startsWith("--listen=")) listen = a.slice("--listen=".length);
  else if (a.startsWith("--wasm-exec=")) wasmExec = a.slice("--wasm-exec=".length);
  else if (a.startsWith("-")) usage(`unknown flag ${a}`);
  else if (!wasmFile) wasmFile = a;
  else usage(`unexpected argument ${a}`);
}
if (!wasmFile) usage("no NODE.wasm given");
if (!wasmExec) usage("set --wasm-exec or GOROOT (wasm_exec.js is in $(go env GOROOT)/lib/wasm)");
const sep = listen.lastIndexOf(":");
const hostname = listen.slice(0, sep), port = Number(listen.slice(sep + 1));
if (sep < 0 || !hostname || !Number.isInteger(port)) usage(`bad --listen ${listen}`);

// wasm_exec.js is a script that sets globalThis.Go; without a global fs it
// writes the program's stdout and stderr to the console.
await import(new URL(wasmExec, `file://${isDeno ? Deno.cwd() : process.cwd()}/`).href);
const wasmBytes = isDeno ? await Deno.readFile(wasmFile) : new Uint8Array(await Bun.file(wasmFile).arrayBuffer());

let geecache = null; // the node's functions, once it is ready
let submit = null; // its batcher: the peer requests of one turn go to the node in one call
const text = (status, body) => new Response(body, { status, headers: { "Content-Type": "text/plain" } });

async function handle(req) {
  if (!geecache) return text(503, "starting\n");
  const u = new URL(req.url); // pathname stays percent-encoded, as sent
  if (u.pathname.startsWith("/_geecache/")) {
    const r = await serveFetch(submit, geecache, req, u.pathname);
    return new Response(r.body, { status: r.status, headers: r.headers });
  }
  if (req.method === "GET" && u.pathname === "/api") {
    const key = u.searchParams.get("key");
    if (key === null) return text(400, "missing key parameter: use /api?key=NAME\n");
    const r = await geecache.get(key, u.searchParams.get("group") ?? "");
    return new Response(r.body, { status: r.status, headers: { "Content-Type": r.status === 200 ? "application/octet-stream" : "text/plain" } });
  }
  if (req.method === "GET" && u.pathname === "/stats") {
    return new Response(await geecache.stats(), { headers: { "Content-Type": "application/json" } });
  }
  return text(404, "not found\n");
}

let server, self;
if (isDeno) {
  await new Promise((ready) => {
    server = Deno.serve({ hostname, port, onListen: ready }, handle);
  });
  self = `http://${server.addr.hostname}:${server.addr.port}`;
} else {
  server = Bun.serve({ hostname, port, fetch: handle });
  self = `http://${server.hostname}:${server.port}`;
}

const go = new Go();
go.argv = [wasmFile, `-self=${self}`, ...goFlags];
go.env = env;
go.exit = (code) => { if (code !== 0) exit(code); };
globalThis.geecacheReady = (node) => {
  submit = batcher(node);
  geecache = node;
  console.log(`geecache wasm node listening on ${self}`);
};
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  // Deno's shutdown waits for the requests in flight; Bun's stop(false) too.
  await (isDeno ? server.shutdown() : server.stop(false));
  if (geecache) geecache.stop(); else exit(0);
};
for (const sig of ["SIGINT", "SIGTERM"]) {
  if (isDeno) Deno.addSignalListener(sig, stop); else process.on(sig, stop);
}
try {
  const { instance } = await WebAssembly.instantiate(wasmBytes, go.importObject);
  await go.run(instance); // until the node stops
} catch (err) {
  console.error("fetch.mjs:", err);
  exit(1);
}
exit(0);
