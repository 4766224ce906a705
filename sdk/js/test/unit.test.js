// Unit tests of the client against a scripted fetch: variants, the event
// queue, retries, backoff, 429 and storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, ServiceError, backoffDelay, memoryStorage, MAX_BATCH } from '../src/index.js';
import { fakeFetch, json, batchOK, mapStorage, waitFor } from './fakes.js';

// A background failure that escapes as an unhandled rejection fails the run.
const unhandled = [];
process.on('unhandledRejection', (e) => unhandled.push(e));
test.after(() => assert.deepEqual(unhandled, [], 'unhandled rejections'));

const variantAnswer = (cid = 7) => ({ campaignId: cid, variantId: 11, variantName: 'B', contentViewId: 3, contentView: { id: 3, name: 'Hero', status: 'published', items: [] }, impressionRecorded: true });

function client(fetch, extra = {}) {
  return createClient({ key: 'sk_c_test', appId: 1, baseUrl: 'http://svc.test/v1', fetch, storage: memoryStorage(), flushInterval: 0, retryBase: 5, retryMax: 50, random: () => 0.5, ...extra });
}

test('createClient refuses a missing key or app id', () => {
  for (const opts of [{}, { key: 'k' }, { key: '', appId: 1 }, { key: 'k', appId: 0 }, { key: 'k', appId: 'x' }]) {
    assert.throws(() => createClient(opts), (e) => e instanceof ServiceError && e.code === 'INVALID_ARGUMENT');
  }
});

test('getVariant asks once per user and campaign, then answers from memory', async () => {
  const f = fakeFetch((req) => json(200, variantAnswer(Number(req.path.split('/')[5]))));
  const c = client(f);
  const a = await c.getVariant(7, { userId: 'u1', attributes: { plan: 'pro' } });
  assert.equal(a.variantId, 11);
  assert.equal(f.calls.length, 1);
  assert.equal(f.calls[0].path, '/v1/apps-external/1/campaigns/7/variant');
  assert.equal(f.calls[0].init.headers.Authorization, 'Bearer sk_c_test');
  assert.deepEqual(f.calls[0].body.attributes, { plan: 'pro' });
  assert.equal(f.calls[0].body.userId, 'u1');
  assert.equal(typeof f.calls[0].body.sessionId, 'string');
  assert.deepEqual(await c.getVariant(7, { userId: 'u1' }), a);
  assert.equal(f.calls.length, 1, 'repeat call made a request');
  await c.getVariant(7, { userId: 'u2' });
  await c.getVariant(8, { userId: 'u1' });
  assert.equal(f.calls.length, 3);
  // Concurrent first calls share one request.
  await Promise.all([c.getVariant(9, { userId: 'u3' }), c.getVariant(9, { userId: 'u3' })]);
  assert.equal(f.calls.length, 4);
  await c.close();
});

test('getVariant takes a campaign key where it takes an id, and refuses anything else', async () => {
  const f = fakeFetch(() => json(200, variantAnswer(7)));
  const c = client(f);
  await c.getVariant('hero-test', { userId: 'u1' });
  assert.equal(f.calls[0].path, '/v1/apps-external/1/campaigns/hero-test/variant');
  await c.getVariant('hero-test', { userId: 'u1' });
  assert.equal(f.calls.length, 1, 'repeat call by key made a request');
  await c.getVariant('7', { userId: 'u1' });
  assert.equal(f.calls[1].path, '/v1/apps-external/1/campaigns/7/variant');
  for (const bad of ['Hero', 'a b', '-a', '', 'x'.repeat(65), 0, -1, 1.5, null, {}]) {
    await assert.rejects(c.getVariant(bad, { userId: 'u1' }), (e) => e instanceof ServiceError && e.code === 'INVALID_ARGUMENT', String(bad));
  }
  assert.equal(f.calls.length, 2);
  await c.close();
});

test('getVariant falls back to the stored variant, else rejects with a ServiceError', async () => {
  const storage = memoryStorage();
  const ok = fakeFetch(() => json(200, variantAnswer()));
  const first = client(ok, { storage });
  const stored = await first.getVariant(7, { userId: 'u1' });
  await first.close();

  const errors = [];
  const down = fakeFetch(() => new TypeError('fetch failed'));
  const second = client(down, { storage, onError: (e) => errors.push(e) });
  assert.deepEqual(await second.getVariant(7, { userId: 'u1' }), stored);
  assert.equal(down.calls.length, 3, 'one request and two retries');
  assert.equal(errors[0].code, 'NETWORK_ERROR');
  await assert.rejects(second.getVariant(7, { userId: 'nobody' }), (e) => e instanceof ServiceError && e.code === 'NETWORK_ERROR' && e.status === 0);

  const notFound = fakeFetch(() => json(404, { error: { code: 'NOT_FOUND', message: 'campaign not found', details: {} } }));
  const third = client(notFound, { storage });
  await assert.rejects(third.getVariant(99, { userId: 'u1' }), (e) => e instanceof ServiceError && e instanceof Error &&
    e.code === 'NOT_FOUND' && e.status === 404 && e.message === 'campaign not found' && typeof e.details === 'object');
  assert.equal(notFound.calls.length, 1, '4xx retried');
  await second.close();
  await third.close();
});

test('a session id is generated once and kept in storage', async () => {
  const storage = mapStorage();
  const f = fakeFetch(() => json(200, variantAnswer()));
  const a = client(f, { storage });
  await a.getVariant(7);
  const sid = f.calls[0].body.sessionId;
  assert.match(sid, /^[0-9a-f-]{36}$/);
  await a.close();
  const b = client(f, { storage });
  await b.getVariant(8);
  assert.equal(f.calls[1].body.sessionId, sid);
  assert.equal(f.calls[1].body.userId, undefined);
  await b.close();
  const given = client(f, { storage, sessionId: 'mine' });
  await given.getVariant(9);
  assert.equal(f.calls[2].body.sessionId, 'mine');
  await given.close();
});

test('track queues in storage with a logId; flush sends one batch and empties the queue', async () => {
  const storage = mapStorage();
  const f = fakeFetch(batchOK);
  const c = client(f, { storage });
  const { logId } = await c.track('purchase', { userId: 'u1', metadata: { amount: 5 } });
  await c.track('view', { userId: 'u1', logId: 'order-1' });
  assert.match(logId, /^[0-9a-f-]{36}$/);
  const queued = JSON.parse(storage.map.get('svc:1:production:queue'));
  assert.deepEqual(queued.map((e) => [e.eventId, e.logId]), [['purchase', logId], ['view', 'order-1']]);
  assert.equal(f.calls.length, 0, 'track sent at once');
  assert.deepEqual(await c.flush(), { sent: 2, dropped: 0, pending: 0 });
  assert.equal(f.calls.length, 1);
  assert.equal(f.calls[0].path, '/v1/apps/1/events/batch');
  assert.deepEqual(f.calls[0].body.events[0].metadata, { amount: 5 });
  assert.equal(c.queueSize, 0);
  await c.close();
  assert.equal(storage.map.has('svc:1:production:queue'), false);
});

test('events queued before a restart are sent by the next client with the same logIds', async () => {
  const storage = mapStorage();
  const down = fakeFetch(() => new TypeError('offline'));
  const a = client(down, { storage });
  const { logId } = await a.track('purchase', { userId: 'u1' });
  await a.close(); // its last attempt fails: the event stays stored
  const f = fakeFetch(batchOK);
  const b = client(f, { storage });
  assert.deepEqual(await b.flush(), { sent: 1, dropped: 0, pending: 0 });
  assert.deepEqual(f.calls[0].body.events.map((e) => e.logId), [logId]);
  await b.close();
});

test('flush retries 5xx and network errors with backoff, sending the same logIds', async () => {
  const f = fakeFetch((req, n) => (n === 0 ? json(503, { error: { code: 'INTERNAL_ERROR', message: 'x', details: {} } }) : n === 1 ? new TypeError('reset') : batchOK(req)));
  const c = client(f, { retryBase: 40, retryMax: 1000 });
  await c.track('a');
  await c.track('b');
  assert.deepEqual(await c.flush(), { sent: 2, dropped: 0, pending: 0 });
  assert.equal(f.calls.length, 3);
  const ids = f.calls.map((r) => r.body.events.map((e) => e.logId).join());
  assert.equal(new Set(ids).size, 1, 'a retry changed the logIds');
  // With random 0.5 the waits are 3/4 of 40 and of 80 ms: at least those.
  assert.ok(f.calls[1].at - f.calls[0].at >= 25, `first retry after ${f.calls[1].at - f.calls[0].at} ms`);
  assert.ok(f.calls[2].at - f.calls[1].at >= 55, `second retry after ${f.calls[2].at - f.calls[1].at} ms`);
  await c.close();
});

test('flush gives up after maxRetries and keeps the events queued', async () => {
  const errors = [];
  const f = fakeFetch(() => json(500, { error: { code: 'INTERNAL_ERROR', message: 'x', details: {} } }));
  const storage = mapStorage();
  const c = client(f, { maxRetries: 2, storage, onError: (e) => errors.push(e) });
  await c.track('a');
  assert.deepEqual(await c.flush(), { sent: 0, dropped: 0, pending: 1 });
  assert.equal(f.calls.length, 3);
  assert.equal(errors.at(-1).status, 500);
  assert.deepEqual(await c.close(), { sent: 0, dropped: 0, pending: 1 });
  assert.equal(JSON.parse(storage.map.get('svc:1:production:queue')).length, 1);
});

test('a 4xx refusal of the batch is not retried; the events are dropped and reported', async () => {
  const drops = [];
  const f = fakeFetch(() => json(403, { error: { code: 'FORBIDDEN', message: 'this key belongs to another app', details: {} } }));
  const c = client(f, { onDrop: (events, reason, err) => drops.push({ events, reason, err }) });
  await c.track('a');
  assert.deepEqual(await c.flush(), { sent: 0, dropped: 1, pending: 0 });
  assert.equal(f.calls.length, 1);
  assert.equal(drops.length, 1);
  assert.equal(drops[0].reason, 'rejected');
  assert.equal(drops[0].err.code, 'FORBIDDEN');
  assert.equal(drops[0].events[0].eventId, 'a');
  await c.close();
});

test('an event the batch answer refuses is dropped alone', async () => {
  const drops = [];
  const f = fakeFetch((req) => json(200, { data: req.body.events.map((e, i) => (i === 1
    ? { success: false, error: { code: 'INVALID_REQUEST', message: 'event has invalid fields', details: { fields: { 'events[1].metadata': 'must be at most 64 KiB' } } } }
    : { success: true, id: i + 1, eventId: e.eventId })) }));
  const c = client(f, { onDrop: (events, reason, err) => drops.push({ events, reason, err }) });
  await c.track('a');
  await c.track('b');
  await c.track('c');
  assert.deepEqual(await c.flush(), { sent: 2, dropped: 1, pending: 0 });
  assert.deepEqual(drops.map((d) => [d.events[0].eventId, d.reason, d.err.code]), [['b', 'rejected', 'INVALID_REQUEST']]);
  assert.ok(drops[0].err.details.fields['events[1].metadata']);
  await c.close();
});

test('429 waits for Retry-After before the next attempt', async () => {
  const f = fakeFetch((req, n) => (n === 0
    ? json(429, { error: { code: 'RATE_LIMIT_EXCEEDED', message: 'rate limit exceeded', details: { retryAfter: 1 } } }, { 'Retry-After': '1' })
    : batchOK(req)));
  const c = client(f, { retryMax: 5000 });
  await c.track('a');
  assert.deepEqual(await c.flush(), { sent: 1, dropped: 0, pending: 0 });
  assert.equal(f.calls.length, 2);
  assert.ok(f.calls[1].at - f.calls[0].at >= 990, `retried after ${f.calls[1].at - f.calls[0].at} ms`);
  await c.close();
});

test('503 SERVICE_UNAVAILABLE waits for Retry-After before the next attempt, within the flush', async () => {
  const f = fakeFetch((req, n) => (n === 0
    ? json(503, { error: { code: 'SERVICE_UNAVAILABLE', message: 'the database did not answer in time, try again', details: {} } }, { 'Retry-After': '1' })
    : batchOK(req)));
  const c = client(f, { retryMax: 5000 });
  await c.track('a');
  assert.deepEqual(await c.flush(), { sent: 1, dropped: 0, pending: 0 });
  assert.equal(f.calls.length, 2);
  assert.ok(f.calls[1].at - f.calls[0].at >= 990, `retried after ${f.calls[1].at - f.calls[0].at} ms`);
  assert.equal(f.calls[0].body.events[0].logId, f.calls[1].body.events[0].logId, 'the retry sent another logId');
  await c.close();
});

test('getVariant retries a 429 after Retry-After, and fails at once when it is longer than retryMax', async () => {
  const f = fakeFetch((req, n) => (n === 0 ? json(429, { error: { code: 'RATE_LIMIT_EXCEEDED', message: 'r', details: {} } }, { 'Retry-After': '0' }) : json(200, variantAnswer())));
  const c = client(f);
  assert.equal((await c.getVariant(7)).variantId, 11);
  assert.equal(f.calls.length, 2);
  const long = fakeFetch(() => json(429, { error: { code: 'RATE_LIMIT_EXCEEDED', message: 'r', details: {} } }, { 'Retry-After': '60' }));
  const d = client(long);
  await assert.rejects(d.getVariant(7), (e) => e.code === 'RATE_LIMIT_EXCEEDED' && e.status === 429 && e.retryAfter === 60000);
  assert.equal(long.calls.length, 1);
  await c.close();
  await d.close();
});

test('the queue is bounded and reports what it drops', async () => {
  const drops = [];
  const c = client(fakeFetch(batchOK), { maxQueueSize: 3, onDrop: (events, reason) => drops.push({ names: events.map((e) => e.eventId), reason }) });
  for (const name of ['e1', 'e2', 'e3', 'e4', 'e5']) await c.track(name);
  assert.equal(c.queueSize, 3);
  assert.deepEqual(drops, [{ names: ['e1'], reason: 'queue_full' }, { names: ['e2'], reason: 'queue_full' }]);
  await c.close();
});

test('batches hold at most maxBatchSize events', async () => {
  const f = fakeFetch(batchOK);
  const c = client(f, { maxBatchSize: 250 });
  for (let i = 0; i < 205; i++) c.track(`e${i}`);
  await waitFor(() => c.queueSize + f.calls.reduce((n, r) => n + r.body.events.length, 0) === 205, 10000, 'queue');
  await c.flush();
  assert.deepEqual(f.calls.map((r) => r.body.events.length), [MAX_BATCH, MAX_BATCH, 5]);
  assert.equal(new Set(f.calls.flatMap((r) => r.body.events.map((e) => e.logId))).size, 205);
  await c.close();
});

test('events are sent on the interval without flush', async () => {
  const f = fakeFetch(batchOK);
  const c = client(f, { flushInterval: 20 });
  await c.track('a');
  await waitFor(() => f.calls.length === 1 && c.queueSize === 0, 10000, 'interval send');
  await c.close();
});

test('background failures go to onError, never to an unhandled rejection', async () => {
  const errors = [];
  const f = fakeFetch(() => new TypeError('offline'));
  const c = client(f, { flushInterval: 10, retryBase: 1, retryMax: 5, storage: mapStorage(), onError: (e) => errors.push(e) });
  await c.track('a');
  await waitFor(() => f.calls.length >= 2, 10000, 'two background attempts');
  assert.ok(errors.every((e) => e instanceof ServiceError));
  assert.equal(c.queueSize, 1);
  await c.close();
});

test('a request without an answer fails with TIMEOUT', async () => {
  const f = fakeFetch((req) => new Promise((_, reject) => req.init.signal.addEventListener('abort', () => {
    const e = new Error('aborted');
    e.name = 'AbortError';
    reject(e);
  })));
  const c = client(f, { timeout: 30 });
  await assert.rejects(c.identify('u1', { plan: 'pro' }), (e) => e.code === 'TIMEOUT');
  await c.close();
});

test('a failing storage is reported and the client keeps working', async () => {
  const errors = [];
  const broken = {
    async getItem() { throw new Error('disk gone'); },
    async setItem() { throw new Error('disk gone'); },
    async removeItem() { throw new Error('disk gone'); },
  };
  const f = fakeFetch(batchOK);
  const c = client(f, { storage: broken, onError: (e) => errors.push(e) });
  await c.track('a');
  assert.deepEqual(await c.flush(), { sent: 1, dropped: 0, pending: 0 });
  assert.ok(errors.length > 0 && errors.every((e) => e.code === 'STORAGE_ERROR'));
  await c.close();
});

test('track refuses bad input and calls after close', async () => {
  const c = client(fakeFetch(batchOK));
  await assert.rejects(c.track(''), (e) => e.code === 'INVALID_ARGUMENT');
  await assert.rejects(c.track('x', { metadata: [1] }), (e) => e.code === 'INVALID_ARGUMENT');
  await c.close();
  await assert.rejects(c.track('x'), (e) => e.code === 'CLIENT_CLOSED');
});

test('identify, getContent and submitForm call their routes', async () => {
  const f = fakeFetch((req) => {
    if (req.path.endsWith('/identify')) return json(200, { userId: req.body.userId, attributes: req.body.attributes });
    if (req.path.includes('/content/')) return json(200, { id: 3, name: 'N', status: 'published', items: [] });
    return json(201, { success: true, formSubmissionId: 1, submittedAt: '2026-01-01T00:00:00.000Z' });
  });
  const c = client(f, { environment: 'staging' });
  await c.identify('u1', { plan: 'pro' });
  await c.getContent(3);
  const sub = await c.submitForm(3, { email: 'a@example.com' }, { userId: 'u1' });
  assert.equal(sub.formSubmissionId, 1);
  assert.deepEqual(f.calls.map((r) => `${r.method} ${r.path}`), [
    'POST /v1/apps-external/1/identify', 'GET /v1/apps-external/1/content/3', 'POST /v1/apps-external/1/submit-form']);
  assert.deepEqual(f.calls[2].body, { contentViewId: 3, data: { email: 'a@example.com' }, userId: 'u1', sessionId: c.sessionId, environment: 'staging' });
  await c.close();
});

test('identify sends the session id the client keeps, which links it to the user', async () => {
  const storage = memoryStorage();
  const f = fakeFetch((req) => {
    if (req.body.userId === 'taken') return json(409, { error: { code: 'SESSION_LINKED', message: 'the session is linked to another user', details: { sessionId: req.body.sessionId } } });
    return json(200, { userId: req.body.userId, attributes: req.body.attributes });
  });
  // identify as the first call: the session is loaded (here, made and
  // stored) before it is sent.
  const first = client(f, { storage });
  await first.identify('u1', { plan: 'pro' });
  const kept = first.sessionId;
  assert.ok(typeof kept === 'string' && kept.length > 0);
  assert.deepEqual(f.calls[0].body, { userId: 'u1', sessionId: kept, attributes: { plan: 'pro' } });
  await first.close();
  // A later client on the same storage keeps the same session.
  const second = client(f, { storage });
  await second.identify('u1');
  assert.equal(f.calls[1].body.sessionId, kept);
  // Another user on the same session: refused, and not retried.
  await assert.rejects(second.identify('taken'), (e) => e instanceof ServiceError && e.code === 'SESSION_LINKED' && e.status === 409);
  assert.equal(f.calls.length, 3);
  await second.close();
});

test('submitForm is not retried after a network error, which may hide a stored submission', async () => {
  const f = fakeFetch(() => new TypeError('reset'));
  const c = client(f);
  await assert.rejects(c.submitForm(3, { email: 'a@example.com' }), (e) => e.code === 'NETWORK_ERROR');
  assert.equal(f.calls.length, 1);
  await c.close();
});

test('backoffDelay doubles from base up to max, with jitter in the upper half', () => {
  for (let attempt = 1; attempt <= 12; attempt++) {
    const step = Math.min(30000, 500 * 2 ** (attempt - 1));
    const lo = backoffDelay(attempt, 500, 30000, () => 0);
    const hi = backoffDelay(attempt, 500, 30000, () => 0.999999);
    assert.equal(lo, step / 2);
    assert.ok(hi <= step && hi >= step * 0.99, `attempt ${attempt}: ${hi} vs ${step}`);
  }
  const seen = new Set(Array.from({ length: 50 }, () => backoffDelay(3)));
  assert.ok(seen.size > 1, 'no jitter');
});

test('baseUrl is taken with or without /v1, and a trailing slash', async () => {
  for (const [given, base] of [
    ['https://ab.example.com', 'https://ab.example.com/v1'],
    ['https://ab.example.com/', 'https://ab.example.com/v1'],
    ['https://ab.example.com/v1', 'https://ab.example.com/v1'],
    ['https://ab.example.com/v1/', 'https://ab.example.com/v1'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/v1'],
    ['https://example.com/ab', 'https://example.com/ab/v1'],
    ['https://example.com/api/v1', 'https://example.com/api/v1'],
    ['  HTTPS://AB.example.com  ', 'HTTPS://AB.example.com/v1'],
  ]) {
    const c = client(fakeFetch(() => json(200, variantAnswer())), { baseUrl: given });
    assert.equal(c.baseUrl, base, given);
    await c.close();
  }
  const f = fakeFetch(() => json(200, variantAnswer()));
  const c = client(f, { baseUrl: 'http://svc.test' });
  await c.getVariant(7, { userId: 'u1' });
  assert.equal(f.calls[0].url, 'http://svc.test/v1/apps-external/1/campaigns/7/variant');
  await c.close();
});

test('createClient refuses a baseUrl that cannot be the service, saying what to pass', () => {
  for (const bad of ['ab.example.com', '/v1', '', 'ftp://ab.example.com', 'https://ab.example.com/v1?x=1', 'https://ab.example.com#v1', 42]) {
    assert.throws(() => createClient({ key: 'k', appId: 1, baseUrl: bad }),
      (e) => e instanceof ServiceError && e.code === 'INVALID_ARGUMENT' && e.message.includes('"https://ab.example.com"') && e.message.includes('/v1'), String(bad));
  }
  assert.throws(() => createClient({ key: 'k', appId: 1, baseUrl: 'https://ab.example.com/v2' }),
    (e) => e.code === 'INVALID_ARGUMENT' && e.message.includes('/v2') && e.message.includes('"https://ab.example.com/v1"'));
});

test('createClient refuses a flushTimeout that is not a positive number', () => {
  for (const flushTimeout of [0, -1, 'x', null, NaN]) {
    assert.throws(() => createClient({ key: 'k', appId: 1, flushTimeout }), (e) => e.code === 'INVALID_ARGUMENT' && /flushTimeout/.test(e.message), String(flushTimeout));
  }
});

// How late past flushTimeout a bounded call may return on a busy machine;
// without the bound, the calls below take 12 s or more.
const slack = 1000;

// never answers a request until it is aborted.
const hanging = () => fakeFetch((req) => new Promise((_, reject) => req.init.signal.addEventListener('abort', () => {
  const e = new Error('aborted');
  e.name = 'AbortError';
  reject(e);
})));

test('flush returns within flushTimeout when the service keeps failing, the events kept', async () => {
  const storage = mapStorage();
  const f = fakeFetch(() => json(503, { error: { code: 'INTERNAL_ERROR', message: 'x', details: {} } }));
  // Without the bound, twelve retries waiting at least 10, 20, 40… ms (up to 2.5 s) would take over 12 s.
  const c = client(f, { storage, retryBase: 20, retryMax: 5000, maxRetries: 12, flushTimeout: 300, random: Math.random });
  await c.track('a');
  const t0 = Date.now();
  assert.deepEqual(await c.flush(), { sent: 0, dropped: 0, pending: 1 });
  const took = Date.now() - t0;
  assert.ok(took <= 300 + slack, `flush took ${took} ms`);
  assert.ok(f.calls.length >= 2, `${f.calls.length} attempts`);
  assert.equal(JSON.parse(storage.map.get('svc:1:production:queue'))[0].eventId, 'a');
  await c.close();
});

test('flush and close cut a request without an answer at flushTimeout; close keeps the events in storage', async () => {
  const storage = mapStorage();
  const f = hanging();
  const c = client(f, { storage, timeout: 60000, flushTimeout: 200 });
  const { logId } = await c.track('a');
  let t0 = Date.now();
  assert.deepEqual(await c.flush(), { sent: 0, dropped: 0, pending: 1 });
  assert.ok(Date.now() - t0 <= 200 + slack, `flush took ${Date.now() - t0} ms`);
  t0 = Date.now();
  assert.deepEqual(await c.close(), { sent: 0, dropped: 0, pending: 1 });
  assert.ok(Date.now() - t0 <= 200 + slack, `close took ${Date.now() - t0} ms`);
  assert.equal(f.calls.length, 2, 'one request by flush, one by close');
  assert.deepEqual(JSON.parse(storage.map.get('svc:1:production:queue')).map((e) => e.logId), [logId]);
});

test('flush waits for an interval send under way at most until its own bound', async () => {
  const f = hanging();
  const c = client(f, { storage: mapStorage(), timeout: 60000, flushInterval: 10, flushTimeout: 150 });
  await c.track('a');
  await waitFor(() => f.calls.length === 1, 10000, 'interval send');
  const t0 = Date.now();
  assert.deepEqual(await c.flush(), { sent: 0, dropped: 0, pending: 1 });
  assert.ok(Date.now() - t0 <= 150 + slack, `flush took ${Date.now() - t0} ms`);
  assert.equal(f.calls.length, 1, 'flush sent while the interval send was under way');
  // close waits as long, then cuts the send: a Node process is not held open by it.
  assert.deepEqual(await c.close(), { sent: 0, dropped: 0, pending: 1 });
  assert.equal(f.calls[0].init.signal.aborted, true);
});

test('close answers what it sent', async () => {
  const f = fakeFetch(batchOK);
  const c = client(f);
  await c.track('a');
  await c.track('b');
  assert.deepEqual(await c.close(), { sent: 2, dropped: 0, pending: 0 });
  assert.equal(f.calls[0].init.keepalive, true);
  assert.deepEqual(await c.close(), { sent: 2, dropped: 0, pending: 0 }, 'a second close answers the first one');
});
