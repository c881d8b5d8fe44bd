// batch.mjs: what every JavaScript host of the js/wasm node shares to hand
// peer requests to the node (shim.js in node.js, fetch.mjs in Deno and
// Bun, examples/workers in workerd). A call from JavaScript into Go costs
// more than answering a request from memory, so the requests of one turn
// of the host's event loop go to the node together, in one call of
// serve(batch, signals, bodies) (see adapters/wasmjs).

// The node's limit on a value when it does not say (nethttp's default).
const defaultMaxValueBytes = 64 << 20;

// later runs f after the requests already queued by the host have come
// in: setImmediate where there is one (node.js, Bun), else a timer.
const later = typeof globalThis.setImmediate === "function" ? globalThis.setImmediate : (f) => setTimeout(f, 0);

// batcher returns submit(method, path, headers, signal, body, done) for
// node (the node's functions, as geecacheReady passed them): it queues a
// peer request, headers being the names and values in turn on lines of
// their own (node's rawHeaders joined with "\n", or rawHeaders(Headers)),
// and calls done(err, {status, headers, body}) with its answer.
//
// With ownContext, each request's answer is handed over from a timer of
// its own, set as it is queued (the first of the batch's timers to fire
// makes the call): workerd runs each request in a context of its own, and
// a Response made in one request's context cannot answer another
// ("Cannot perform I/O on behalf of a different request").
export function batcher(node, { ownContext = false } = {}) {
  let b = null; // the batch being gathered: {text, signals, bodies, done, answers, err}
  function flush(cur) {
    if (cur.answers !== null || cur.err !== null) return;
    if (b === cur) b = null;
    try {
      cur.answers = node.serve(cur.text.join("\0"), cur.signals, cur.bodies);
    } catch (err) {
      cur.err = err;
    }
  }
  function deliver(cur, i) {
    if (cur.err !== null) return cur.done[i](cur.err);
    const r = cur.answers[i];
    if (r instanceof Promise) r.then((r) => cur.done[i](null, r), cur.done[i]);
    else cur.done[i](null, r);
  }
  return (method, path, headers, signal, body, done) => {
    if (b === null) {
      const cur = b = { text: [], signals: [], bodies: [], done: [], answers: null, err: null };
      if (!ownContext) later(() => { flush(cur); cur.done.forEach((_, i) => deliver(cur, i)); });
    }
    const cur = b, i = b.text.length;
    b.text.push(headers ? `${method}\n${path}\n${headers}` : `${method}\n${path}`);
    b.signals.push(signal ?? undefined);
    b.bodies.push(body);
    b.done.push(done);
    if (ownContext) later(() => { flush(cur); deliver(cur, i); });
  };
}

// serveFetch answers a Fetch API Request for the peer protocol with
// submit (a batcher's), as a Promise of its answer. path is the request's
// path, as sent (percent-encoded).
export async function serveFetch(submit, node, req, path) {
  const body = req.method === "PUT" || req.method === "POST" ? await peerBody(node, req, req.body) : undefined;
  const headers = rawHeaders(req.headers);
  return new Promise((resolve, reject) => {
    submit(req.method, path, headers, req.signal, body, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

// rawHeaders joins a Headers object's names and values, in turn, with "\n".
export function rawHeaders(headers) {
  let s = "";
  for (const [k, v] of headers) s += s ? `\n${k}\n${v}` : `${k}\n${v}`;
  return s;
}

// signed tells whether a request carries the peer signature's headers
// (has: the name, lower case, to a bool). The node checks the signature.
export function signed(has) {
  return has("x-geecache-signature") && has("x-geecache-timestamp");
}

// needsSignature tells whether node refuses a request of method with a
// body (PUT, POST) that comes unsigned, whatever the body: a PUT (a write:
// the node takes none unsigned), and, where the node has a peer secret,
// any (a POST is a peer's batch: GetMany, RemoveMany, Purge). Its body
// need not be read.
export function needsSignature(node, method) {
  return method === "PUT" || node.signed === true;
}

// maxValueBytes is node's limit on a value.
export function maxValueBytes(node) {
  return node.maxValueBytes > 0 ? node.maxValueBytes : defaultMaxValueBytes;
}

// peerBody reads the body of req, a peer's PUT (its Group.Set) or POST
// (a batch), from stream (a ReadableStream), at most one byte over the
// node's limit, so that the node refuses a larger value (413) without the
// host reading or holding more; the rest is never read. A request the
// node refuses unsigned (needsSignature) that comes without the
// signature's headers gets an empty body, unread: the node refuses it
// (401) all the same.
export async function peerBody(node, req, stream) {
  if (!stream || (needsSignature(node, req.method) && !signed((name) => req.headers.has(name)))) return new Uint8Array(0);
  const limit = maxValueBytes(node) + 1;
  const chunks = [];
  let kept = 0;
  const reader = stream.getReader();
  while (kept < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    const part = value.subarray(0, limit - kept);
    chunks.push(part);
    kept += part.length;
  }
  if (kept >= limit) reader.cancel().catch(() => {});
  const body = new Uint8Array(kept);
  let at = 0;
  for (const c of chunks) { body.set(c, at); at += c.length; }
  return body;
}
