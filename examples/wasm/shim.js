// shim.js runs a GeeCache node compiled to js/wasm in node.js (>= 18): it
// listens with node's http module and hands every request to the node.
//
//   node shim.js [--listen=HOST:PORT] [--wasm-exec=PATH] NODE.wasm [-- GO-FLAGS...]
//
//   --listen     where to listen (default 127.0.0.1:0, a port the OS picks)
//   --wasm-exec  Go's wasm_exec.js (default $GOROOT/lib/wasm/wasm_exec.js)
//   GO-FLAGS     passed to the node, e.g. -peers=http://127.0.0.1:8001,http://127.0.0.1:8002
//
// The node's own address (-self) is http://HOST:PORT once listening. When
// the node is ready the shim prints one line to stdout:
//
//   geecache wasm node listening on http://127.0.0.1:PORT
//
// Routes: /_geecache/... the peer protocol (the node's serve function);
// GET /api?key=K[&group=echo] the key's value from the cluster (200, 404 "K not exist");
// GET /stats the node's counters as JSON. SIGINT/SIGTERM stop it.
"use strict";

const http = require("http");
const path = require("path");

function usage(msg) {
  console.error(`shim.js: ${msg}\nusage: node shim.js [--listen=HOST:PORT] [--wasm-exec=PATH] NODE.wasm [-- GO-FLAGS...]`);
  process.exit(2);
}

const args = process.argv.slice(2);
let listen = "127.0.0.1:0";
let wasmExec = process.env.GOROOT ? path.join(process.env.GOROOT, "lib", "wasm", "wasm_exec.js") : "";
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
const host = listen.slice(0, sep), port = Number(listen.slice(sep + 1));
if (sep < 0 || !host || !Number.isInteger(port)) usage(`bad --listen ${listen}`);

// What wasm_exec.js needs from the host, as Go's own wasm_exec_node.js sets it.
globalThis.require = require;
globalThis.fs = require("fs");
globalThis.path = path;
globalThis.TextEncoder = require("util").TextEncoder;
globalThis.TextDecoder = require("util").TextDecoder;
globalThis.performance ??= require("perf_hooks").performance;
globalThis.crypto ??= require("crypto");
require(path.resolve(wasmExec));

let geecache = null; // the node's functions, once it is ready
let inflight = 0; // requests being answered

// maxValueBytes is the node's limit on a value (nethttp's default, 64 MiB).
const maxValueBytes = 64 << 20;

// readBody reads a request's body, keeping at most limit bytes (the rest
// is read and dropped), as a Uint8Array (a Buffer).
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let kept = 0;
    req.on("data", (c) => {
      if (kept < limit) {
        const part = c.subarray(0, limit - kept);
        chunks.push(part);
        kept += part.length;
      }
    });
    req.on("end", () => resolve(Buffer.concat(chunks, kept)));
    req.on("error", reject);
  });
}

// servePeer hands a peer request to the node, and sends its answer. The
// requests of one turn of the event loop go to the node together, in one
// call of serve(batch, signals, bodies) (see adapters/wasmjs): a call
// into Go costs more than answering a request from memory, so under load
// the node makes one call for many requests. The answer is sent from
// there, with no Promise per request unless the node has to wait.
let batch = null; // {text: [], signals: [], bodies: [], res: []} until flushed
function servePeer(req, res, rawPath, body) {
  // The load is abandoned if the caller goes away before the answer.
  const ac = new AbortController();
  res.on("close", () => { if (!res.writableFinished) ac.abort(); });
  if (batch === null) {
    batch = { text: [], signals: [], bodies: [], res: [] };
    setImmediate(flush);
  }
  // rawHeaders: node builds req.headers only when asked.
  const h = req.rawHeaders;
  batch.text.push(h.length ? `${req.method}\n${rawPath}\n${h.join("\n")}` : `${req.method}\n${rawPath}`);
  batch.signals.push(ac.signal);
  batch.bodies.push(body);
  batch.res.push(res);
}

function flush() {
  const b = batch;
  batch = null;
  let answers;
  try {
    answers = geecache.serve(b.text.join("\0"), b.signals, b.bodies);
  } catch (err) {
    b.res.forEach((res) => fail(res, err));
    return;
  }
  b.res.forEach((res, i) => {
    const r = answers[i];
    if (r instanceof Promise) r.then((r) => reply(res, r), (err) => fail(res, err));
    else reply(res, r);
  });
}

function reply(res, r) {
  inflight--;
  send(res, r.status, r.headers, r.body);
}

function fail(res, err) {
  inflight--;
  console.error("shim.js:", err);
  if (!res.headersSent) send(res, 500, { "Content-Type": "text/plain" }, String(err) + "\n");
  else res.destroy();
}

function send(res, status, headers, body) {
  res.writeHead(status, headers);
  res.end(body);
}

// handle answers the shim's own routes.
async function handle(req, res, rawPath, query) {
  if (req.method === "GET" && rawPath === "/api") {
    const params = new URLSearchParams(query), key = params.get("key");
    if (key === null) return send(res, 400, { "Content-Type": "text/plain" }, "missing key parameter: use /api?key=NAME\n");
    const r = await geecache.get(key, params.get("group") ?? "");
    return send(res, r.status, { "Content-Type": r.status === 200 ? "application/octet-stream" : "text/plain" }, r.body);
  }
  if (req.method === "GET" && rawPath === "/stats") {
    return send(res, 200, { "Content-Type": "application/json" }, await geecache.stats());
  }
  send(res, 404, { "Content-Type": "text/plain" }, "not found\n");
}

const server = http.createServer((req, res) => {
  if (!geecache) return send(res, 503, { "Content-Type": "text/plain" }, "starting\n");
  inflight++;
  const q = req.url.indexOf("?");
  const rawPath = q < 0 ? req.url : req.url.slice(0, q);
  if (rawPath.startsWith("/_geecache/")) {
    // A peer's PUT (its Group.Set) carries the value, and its POST (a
    // batch: GetMany, RemoveMany, Purge) the keys: read at most one byte
    // over the node's limit, so that the node refuses a larger one (413)
    // without the shim holding all of it.
    if (req.method !== "PUT" && req.method !== "POST") return servePeer(req, res, rawPath, undefined);
    return readBody(req, maxValueBytes + 1).then((body) => servePeer(req, res, rawPath, body), (err) => fail(res, err));
  }
  handle(req, res, rawPath, q < 0 ? "" : req.url.slice(q + 1)).then(() => inflight--, (err) => fail(res, err));
});

server.listen(port, host, async () => {
  const a = server.address();
  const self = `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`;
  const go = new Go();
  go.argv = [wasmFile, `-self=${self}`, ...goFlags];
  go.env = Object.assign({ TMPDIR: require("os").tmpdir() }, process.env);
  go.exit = (code) => { if (code !== 0) process.exit(code); };
  globalThis.geecacheReady = (node) => {
    geecache = node;
    console.log(`geecache wasm node listening on ${self}`);
  };
  // Stop: no new connections, let the requests in flight finish (at most
  // 5 s), then stop the node; the process exits when it has.
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeIdleConnections();
    const deadline = Date.now() + 5000;
    const wait = () => {
      if (inflight > 0 && Date.now() < deadline) return setTimeout(wait, 20);
      if (geecache) geecache.stop(); else process.exit(0);
    };
    wait();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  try {
    const { instance } = await WebAssembly.instantiate(require("fs").readFileSync(wasmFile), go.importObject);
    await go.run(instance); // until the node stops
  } catch (err) {
    console.error("shim.js:", err);
    process.exit(1);
  }
  // Go's pending timers and fetch's idle connections would keep node
  // running after the program ended.
  process.exit(0);
});
