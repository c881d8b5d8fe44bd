# workerd's configuration for objects.mjs: a front Worker and NODES_COUNT
# Durable Objects, each a GeeCache node, their storage in memory (the
# nodes keep their cache in the isolate's memory and store nothing).
# `workerd serve objects.capnp` from this folder, with node.wasm,
# wasm_exec.js and ../wasm/batch.mjs beside it (see README.md); it listens on 127.0.0.1:8787.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "geecache", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "geecache")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "objects.mjs", esModule = embed "objects.mjs"),
    (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
    (name = "batch.mjs", esModule = embed "batch.mjs"),
    (name = "node.wasm", wasm = embed "node.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  durableObjectNamespaces = [(className = "GeeCacheNode", uniqueKey = "geecache-node")],
  durableObjectStorage = (inMemory = void),
  bindings = [
    (name = "NODES", durableObjectNamespace = "GeeCacheNode"),
    (name = "NODES_COUNT", text = "3"),
    # A Workers secret on Cloudflare; from workerd's environment here.
    (name = "GEECACHE_SECRET", fromEnvironment = "GEECACHE_SECRET"),
    # How long each node's slow database takes per lookup (a Go duration;
    # unset: no delay).
    (name = "DELAY", fromEnvironment = "GEECACHE_DELAY"),
  ],
);
