// drive.cjs opens page.html in headless Chromium (through playwright-core)
// and serves the page's node's API from node.js, so that a test asks the
// browser node as it asks any other:
//
//   node drive.cjs --playwright=DIR --chromium=PATH PAGE-URL
//
//   --playwright  the playwright-core package's folder
//   --chromium    the Chromium binary (e.g. /usr/bin/chromium)
//
// It listens on 127.0.0.1 (a port the OS picks) and prints, once the page's
// node is ready:
//
//   geecache browser node listening on http://127.0.0.1:PORT
//
// Routes: GET /api?key=K[&group=echo] (the page's geecache.get),
// GET /many?key=K&key=K2...[&group=echo] (the page's geecache.getMany: a JSON
// array of {status, body}, one per key, in order), GET /stats,
// POST /open?url=URL (load another page, for example with other peers, and
// wait until its node is ready). SIGINT/SIGTERM close the browser and stop.
"use strict";
const http = require("http");

let playwright = "", chromiumPath = "", pageURL = "";
for (const a of process.argv.slice(2)) {
  if (a.startsWith("--playwright=")) playwright = a.slice("--playwright=".length);
  else if (a.startsWith("--chromium=")) chromiumPath = a.slice("--chromium=".length);
  else if (!pageURL) pageURL = a;
  else { console.error(`drive.cjs: unexpected argument ${a}`); process.exit(2); }
}
if (!playwright || !chromiumPath || !pageURL) {
  console.error("usage: node drive.cjs --playwright=DIR --chromium=PATH PAGE-URL");
  process.exit(2);
}
const { chromium } = require(playwright);

(async () => {
  // --no-sandbox: Chromium's sandbox needs user namespaces, which CI
  // containers (running as root) do not give.
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox"] });
  const stop = async () => { await browser.close().catch(() => {}); process.exit(0); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const page = await browser.newPage();
  page.on("console", (m) => console.log(`page: ${m.text()}`));
  page.on("pageerror", (e) => console.log(`page error: ${e}`));
  const open = async (url) => {
    await page.goto(url);
    await page.waitForFunction(() => globalThis.geecache !== undefined, null, { timeout: 30000 });
  };
  await open(pageURL);
  console.log(`chromium ${browser.version()}`);

  const server = http.createServer(async (req, res) => {
    try {
      const u = new URL(req.url, "http://x");
      if (u.pathname === "/api") {
        const r = await page.evaluate(([k, g]) => geecache.get(k, g), [u.searchParams.get("key") ?? "", u.searchParams.get("group") ?? ""]);
        res.writeHead(r.status, { "Content-Type": "text/plain" });
        return res.end(r.body);
      }
      if (u.pathname === "/many") {
        const r = await page.evaluate(([ks, g]) => geecache.getMany(ks, g), [u.searchParams.getAll("key"), u.searchParams.get("group") ?? ""]);
        res.writeHead(200, { "Content-Type": "application/json" });
        return res.end(JSON.stringify(r));
      }
      if (u.pathname === "/open" && req.method === "POST") {
        await open(u.searchParams.get("url"));
        res.writeHead(204);
        return res.end();
      }
      if (u.pathname === "/stats") {
        res.writeHead(200, { "Content-Type": "application/json" });
        return res.end(await page.evaluate(() => geecache.stats()));
      }
      res.writeHead(404); res.end("not found\n");
    } catch (err) {
      res.writeHead(500); res.end(String(err));
    }
  });
  server.listen(0, "127.0.0.1", () => {
    console.log(`geecache browser node listening on http://127.0.0.1:${server.address().port}`);
  });
})().catch((err) => { console.error("drive.cjs:", err); process.exit(1); });
