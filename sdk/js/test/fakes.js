// Test doubles: a scripted fetch and storages that count or fail.

/** json builds a fake fetch Response. */
export function json(status, body, headers = {}) {
  const h = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), String(v)]));
  return {
    ok: status >= 200 && status < 300,
    status,
    headers: { get: (k) => h.get(k.toLowerCase()) ?? null },
    text: async () => (body === undefined ? '' : JSON.stringify(body)),
  };
}

/**
 * fakeFetch answers each request with handler(req, n) where req is
 * {method, url, path, body, init} and n counts calls (0-based). Calls are
 * recorded in fetch.calls with their time.
 */
export function fakeFetch(handler) {
  const f = async (url, init = {}) => {
    const req = {
      url,
      path: new URL(url).pathname,
      method: init.method || 'GET',
      body: init.body ? JSON.parse(init.body) : undefined,
      init,
      at: Date.now(),
    };
    const n = f.calls.length;
    f.calls.push(req);
    const res = await handler(req, n);
    if (res instanceof Error) throw res;
    return res;
  };
  f.calls = [];
  return f;
}

/** The answer the service gives a batch: every event stored. */
export function batchOK(req) {
  return json(200, { data: req.body.events.map((e, i) => ({ success: true, id: i + 1, eventId: e.eventId, timestamp: new Date().toISOString() })), accepted: req.body.events.length, rejected: 0 });
}

/** A storage whose contents the test can read synchronously. */
export function mapStorage() {
  const m = new Map();
  return {
    map: m,
    async getItem(k) { return m.has(k) ? m.get(k) : null; },
    async setItem(k, v) { m.set(k, v); },
    async removeItem(k) { m.delete(k); },
  };
}

/** waitFor polls cond until it holds, failing after timeout ms. */
export async function waitFor(cond, timeout = 10000, what = 'condition') {
  const end = Date.now() + timeout;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
