//go:build !js && !wasip1

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/geecache/geecache/examples/internal/hosttest"
)

// bareFetchServer answers every request with the bytes the wasm node
// sends for scores/Tom (headers: JSON in BARE_HEADERS) through the host's
// own Fetch API server (Deno.serve, Bun.serve), as fetch.mjs answers a
// peer request, with no Go behind it.
const bareFetchServer = `
const env = typeof Deno !== "undefined" ? Deno.env.toObject() : process.env;
const headers = JSON.parse(env.BARE_HEADERS);
const body = new Uint8Array([54, 51, 48]);
const handle = async (req) => {
  const r = await Promise.resolve({ status: 200, headers, body });
  return new Response(r.body, { status: r.status, headers: r.headers });
};
const ready = (port) => console.log("geecache wasm node listening on http://127.0.0.1:" + port);
if (typeof Deno !== "undefined") Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready(port) }, handle);
else ready(Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handle }).port);
`

// bareWorker is bareFetchServer as a Worker, and bareConfig its workerd
// configuration.
const bareWorker = `
const body = new Uint8Array([54, 51, 48]);
export default {
  async fetch(req, env) {
    const r = await Promise.resolve({ status: 200, headers: JSON.parse(env.HEADERS), body });
    return new Response(r.body, { status: r.status, headers: r.headers });
  },
};
`

const bareConfig = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "bare", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "bare")],
);
const worker :Workerd.Worker = (
  modules = [(name = "bare.mjs", esModule = embed "bare.mjs")],
  compatibilityDate = "2026-11-01",
  bindings = [(name = "HEADERS", fromEnvironment = "BARE_HEADERS")],
);
`

// startBare starts the bare server of host ("node", "deno", "bun" or
// "workerd") at path tool, answering with headers (JSON).
func startBare(b *testing.B, host, tool, headers string) *hosttest.Proc {
	dir := b.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	ready := regexp.MustCompile(`geecache wasm node listening on (http://127\.0\.0\.1:\d+)`)
	var cmd *exec.Cmd
	switch host {
	case "node":
		cmd = exec.Command(tool, "-e", bareNodeServer)
	case "deno":
		cmd = exec.Command(tool, "run", "--allow-net=127.0.0.1", "--allow-env", write("bare.mjs", bareFetchServer))
	case "bun":
		cmd = exec.Command(tool, write("bare.mjs", bareFetchServer))
	case "workerd":
		write("bare.mjs", bareWorker)
		write("bare.capnp", bareConfig)
		return hosttest.StartWorkerd(b, dir, "bare.capnp", []string{"bare.mjs"}, func(string) []string {
			return []string{"BARE_HEADERS=" + headers}
		})
	default:
		b.Fatalf("no bare server for %s", host)
	}
	cmd.Env = append(os.Environ(), "BARE_HEADERS="+headers)
	return hosttest.Start(b, cmd, ready)
}
