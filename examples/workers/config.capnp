# workerd's configuration for worker.mjs: `workerd serve config.capnp`
# (from this folder, with node.wasm, wasm_exec.js and
# ../wasm/batch.mjs beside it: see
# README.md). It listens on 127.0.0.1:8787; `--socket-addr http=HOST:PORT`
# or `--socket-fd http=FD` moves it.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "geecache", worker = .worker),
    # fetch() from the Worker: workerd's default reaches public addresses
    # only; the peers of a local cluster are on 127.0.0.1.
    (name = "peers", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "geecache")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
    (name = "batch.mjs", esModule = embed "batch.mjs"),
    (name = "node.wasm", wasm = embed "node.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  globalOutbound = "peers",
  bindings = [
    # On Cloudflare, GEECACHE_SECRET is a secret (wrangler secret put);
    # here it comes from workerd's environment, never from this file.
    (name = "GEECACHE_SECRET", fromEnvironment = "GEECACHE_SECRET"),
    (name = "PEERS", fromEnvironment = "GEECACHE_PEERS"),
    (name = "SELF", fromEnvironment = "GEECACHE_SELF"),
  ],
);
