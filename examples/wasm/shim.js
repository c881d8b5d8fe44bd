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

let shared = null; // batch.mjs, what the hosts share: imported before the node starts
let submit = null; // its batcher for the node, once it is ready

// readBody reads the body of a peer's PUT or POST as a Buffer: at most
// one byte over the node's limit, so that the node refuses a larger value
// (413) without the shim reading or holding more (the connection is
// closed after the answer, the rest unread). A request the node refuses
// unsigned (shared.needsSignature) that comes without the signature's
// headers gets an empty body, unread: the node refuses it (401) all the
// same.
function readBody(req, res) {
  if (shared.needsSignature(geecache, req.method) && !shared.signed((name) => req.headers[name] !== undefined)) {
    res.shouldKeepAlive = false;
    return Promise.resolve(Buffer.alloc(0));
  }
  const limit = shared.maxValueBytes(geecache) + 1;
  return new Promise((resolve, reject) => {
    const chunks = [];
    let kept = 0;
    const onData = (c) => {
      const part = c.subarray(0, limit - kept);
      chunks.push(part);
      kept += part.length;
      if (kept >= limit) {
        req.off("data", onData);
        req.pause();
        res.shouldKeepAlive = false;
        resolve(Buffer.concat(chunks, kept));
      }
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks, kept)));
    req.on("error", reject);
  });
}

// servePeer hands a peer request to the node (batch.mjs: the requests of
// one turn of the event loop go in one call), and sends its answer.
function servePeer(req, res, rawPath, body) {
  // The load is abandoned if the caller goes away before the answer.
  const ac = new AbortController();
  res.on("close", () => { if (!res.writableFinished) ac.abort(); });
  // rawHeaders: node builds req.headers only when asked.
  submit(req.method, rawPath, req.rawHeaders.join("\n"), ac.signal, body, (err, r) => (err ? fail(res, err) : reply(res, r)));
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
    // batch: GetMany, RemoveMany, Purge) the keys (readBody).
    if (req.method !== "PUT" && req.method !== "POST") return servePeer(req, res, rawPath, undefined);
    return readBody(req, res).then((body) => servePeer(req, res, rawPath, body), (err) => fail(res, err));
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
    submit = shared.batcher(node);
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
    shared = await import(require("url").pathToFileURL(path.join(__dirname, "batch.mjs")).href);
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
