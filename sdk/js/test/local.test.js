// Local mode against a scripted fetch: the ruleset with its ETag, the
// stream (fetch's streaming body), exposures in batches, remote
// campaigns, bootstrap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, memoryStorage, ServiceError } from '../src/index.js';
import { fakeFetch, json, waitFor } from './fakes.js';

const unhandled = [];
process.on('unhandledRejection', (e) => unhandled.push(e));
test.after(() => assert.deepEqual(unhandled, [], 'unhandled rejections'));

const campaign = (id, key, extra = {}) => ({
  id, key, evaluation: 'local', assignmentType: 'weighted', namespace: null, audience: null,
  variants: [{ id: id * 10, name: 'A', trafficAllocation: 100, contentViewId: 1, isControl: true }, { id: id * 10 + 1, name: 'B', trafficAllocation: 0, contentViewId: 2, isControl: false }],
  ...extra,
});
const ruleset = (version, campaigns) => ({ version, campaigns, contentViews: [{ id: 1, name: 'one', status: 'published', items: [] }] });

// stream answers a fetch Response whose body the test writes to.
function stream() {
  let ctl;
  const body = new ReadableStream({ start(c) { ctl = c; } });
  const enc = new TextEncoder();
  return {
    res: { ok: true, status: 200, headers: { get: () => 'text/event-stream' }, body, text: async () => '' },
    send: (s) => ctl.enqueue(enc.encode(s)),
    end: () => ctl.close(),
  };
}

function client(fetch, extra = {}) {
  return createClient({ key: 'ck', appId: 1, baseUrl: 'http://svc.test/v1', fetch, storage: memoryStorage(), flushInterval: 0,
    retryBase: 5, retryMax: 20, random: () => 0.5, evaluation: 'local', ...extra });
}

test('local mode downloads the ruleset, follows the stream and re-downloads on a new version with its ETag', async () => {
  let rs = ruleset('v1', [campaign(1, 'one')]);
  const streams = [];
  const f = fakeFetch((req) => {
    if (req.path.endsWith('/ruleset/stream')) {
      const s = stream();
      streams.push({ s, req });
      return s.res;
    }
    if (req.path.endsWith('/ruleset')) {
      const inm = req.init.headers['If-None-Match'];
      return inm === `"${rs.version}"` ? json(304, undefined) : json(200, rs, { ETag: `"${rs.version}"` });
    }
    if (req.path.endsWith('/exposures')) return json(200, { data: req.body.exposures.map((_, i) => ({ index: i, recorded: true })) });
    return json(200, { campaignId: 9, variantId: 99, variantName: 'R', contentViewId: 1, contentView: null, impressionRecorded: true });
  });
  const seen = [];
  const c = client(f);
  c.onRulesetChange((r) => seen.push(r.version));
  await c.ready();
  const a = await c.getVariant('one', { userId: 'u1' });
  assert.deepEqual(a, { campaignId: 1, variantId: 10, variantName: 'A', contentViewId: 1, contentView: { id: 1, name: 'one', status: 'published', items: [] }, impressionRecorded: false });
  const asked = f.calls.filter((r) => !r.path.endsWith('/ruleset/stream')).length;
  await c.getVariant(1, { userId: 'u2' });
  assert.equal(f.calls.filter((r) => !r.path.endsWith('/ruleset/stream')).length, asked, 'getVariant went to the network');

  await waitFor(() => streams.length === 1, 2000, 'the stream');
  assert.equal(streams[0].req.init.headers.Accept, 'text/event-stream');
  streams[0].s.send('retry: 1000\n\nid: v1\nevent: ruleset\ndata: {"version":"v1"}\n\n:\n\n');
  // The same version costs nothing; a new one is downloaded, split
  // across chunks as a network may split it.
  rs = ruleset('v2', [campaign(1, 'one', { variants: [{ id: 10, name: 'A', trafficAllocation: 0, contentViewId: 1 }, { id: 11, name: 'B', trafficAllocation: 100, contentViewId: 2 }] })]);
  streams[0].s.send('id: v2\nevent: rule');
  streams[0].s.send('set\r\ndata: {"version":"v2"}\r\n\r\n');
  await waitFor(() => seen.includes('v2'), 2000, 'the new ruleset');
  const dl = f.calls.filter((r) => r.path.endsWith('/ruleset'));
  assert.equal(dl.at(-1).init.headers['If-None-Match'], '"v1"');
  assert.equal((await c.getVariant('one', { userId: 'u1' })).variantId, 11);

  // A dropped stream comes back with Last-Event-ID, and downloads again.
  const before = f.calls.filter((r) => r.path.endsWith('/ruleset')).length;
  streams[0].s.end();
  await waitFor(() => streams.length === 2, 2000, 'the reconnect');
  assert.equal(streams[1].req.init.headers['Last-Event-ID'], 'v2');
  await waitFor(() => f.calls.filter((r) => r.path.endsWith('/ruleset')).length > before, 2000, 'the download on reconnect');

  // Remote campaigns ask the server.
  const remote = await c.getVariant('remote', { userId: 'u1' });
  assert.equal(remote.variantId, 99);
  assert.ok(f.calls.some((r) => r.path === '/v1/apps-external/1/campaigns/remote/variant'));

  // Exposures: one per user, campaign and variant, in one batch.
  await c.flush();
  const ex = f.calls.filter((r) => r.path.endsWith('/exposures'));
  assert.equal(ex.length, 1);
  assert.deepEqual(ex[0].body.exposures, [
    { campaignId: 1, variantId: 10, userId: 'u1' },
    { campaignId: 1, variantId: 10, userId: 'u2' },
    { campaignId: 1, variantId: 11, userId: 'u1' },
  ]);
  assert.equal(c.exposureQueueSize, 0);
  await c.close();
  assert.ok(streams[1].req.init.signal.aborted, 'close() ends the stream');
});

test('exposures go in batches of maxBatchSize, and refused items are reported', async () => {
  const errors = [];
  const f = fakeFetch((req) => {
    if (req.path.endsWith('/exposures')) return json(200, { data: req.body.exposures.map((_, i) => ({ index: i, recorded: i !== 1, ...(i === 1 ? { reason: 'variant_mismatch' } : {}) })) });
    return json(500, { error: { code: 'INTERNAL', message: 'no' } });
  });
  const c = client(f, { bootstrap: ruleset('b', [campaign(1, 'one')]), stream: false, maxBatchSize: 3, onError: (e) => errors.push(e) });
  for (let i = 0; i < 7; i++) c.getVariantSync('one', { userId: `u${i}` });
  await waitFor(() => f.calls.filter((r) => r.path.endsWith('/exposures')).length >= 2, 2000, 'the full batches');
  await c.flush();
  const sizes = f.calls.filter((r) => r.path.endsWith('/exposures')).map((r) => r.body.exposures.length);
  assert.deepEqual(sizes, [3, 3, 1]);
  assert.equal(errors.filter((e) => e.code === 'EXPOSURE_REFUSED').length, 2, 'the two refused items');
  assert.ok(errors.every((e) => e instanceof ServiceError));
  await c.close();
});

test('bootstrap starts local mode without a request, and a visitor known by a session only is not targeted', async () => {
  const f = fakeFetch(() => new Error('no network here'));
  const targeted = campaign(2, 'two', { audience: { rules: [{ field: 'plan', operator: 'equals', value: 'pro' }] } });
  const c = client(f, { bootstrap: ruleset('b', [campaign(1, 'one'), targeted]), stream: false, sessionId: 's1' });
  assert.equal(c.getVariantSync('one').variantId, 10);
  assert.equal((await c.getVariant('one')).variantId, 10);
  assert.deepEqual(await c.getVariant('two', { attributes: { plan: 'pro' } }), { campaignId: 2, variantId: null, reason: 'not_in_audience' });
  assert.equal((await c.getVariant(2, { userId: 'u', attributes: { plan: 'pro' } })).variantId, 20);
  assert.equal(c.ruleset.version, 'b');
  assert.equal(f.calls.length, 0);
  assert.throws(() => client(f, { bootstrap: { version: 'x' } }), /bootstrap/);
  assert.throws(() => client(f, { evaluation: 'sometimes' }), /evaluation/);
  c._exposures.length = 0;
  await c.close();
});

test('without a ruleset, local mode asks the server', async () => {
  const f = fakeFetch((req) => {
    if (req.path.includes('/ruleset')) return json(503, { error: { code: 'UNAVAILABLE', message: 'down' } });
    return json(200, { campaignId: 1, variantId: 5, variantName: 'S', contentViewId: 1, contentView: null, impressionRecorded: true });
  });
  const c = client(f, { stream: false, retryMax: 1, onError: () => {} });
  assert.equal((await c.getVariant(1, { userId: 'u' })).variantId, 5);
  assert.equal(c.ruleset, null);
  await c.close();
});

test('where EventSource exists (browsers), the stream goes through it with the key in the query, and each open downloads', async () => {
  const sources = [];
  class FakeEventSource {
    constructor(url) { this.url = url; this.readyState = 0; this.listeners = {}; sources.push(this); }
    addEventListener(type, fn) { (this.listeners[type] ||= []).push(fn); }
    emit(type, ev = {}) { for (const fn of this.listeners[type] || []) fn(ev); }
    close() { this.readyState = 2; this.closed = true; }
  }
  let rs = ruleset('v1', [campaign(1, 'one')]);
  const f = fakeFetch((req) => (req.init.headers['If-None-Match'] === `"${rs.version}"` ? json(304) : json(200, rs)));
  const saved = { es: globalThis.EventSource, fetch: globalThis.fetch };
  globalThis.EventSource = FakeEventSource;
  globalThis.fetch = f;
  try {
    const c = createClient({ key: 'ck/+', appId: 1, baseUrl: 'http://svc.test/v1', storage: memoryStorage(), flushInterval: 0, evaluation: 'local' });
    await c.ready();
    assert.equal(sources.length, 1);
    assert.equal(sources[0].url, 'http://svc.test/v1/apps-external/1/ruleset/stream?key=ck%2F%2B');
    const downloads = () => f.calls.filter((r) => r.path.endsWith('/ruleset')).length;
    const n = downloads();
    sources[0].emit('open');
    await waitFor(() => downloads() === n + 1, 2000, 'the download on open');
    rs = ruleset('v2', [campaign(2, 'two')]);
    sources[0].emit('ruleset', { data: '{"version":"v2"}', lastEventId: 'v2' });
    await waitFor(() => c.ruleset.version === 'v2', 2000, 'the new ruleset');
    // Refused for good (CLOSED): opened anew after a backoff.
    sources[0].readyState = 2;
    sources[0].emit('error');
    await waitFor(() => sources.length === 2, 2000, 'a new EventSource');
    c._exposures.length = 0;
    await c.close();
    assert.ok(sources[1].closed, 'close() closes the EventSource');
  } finally {
    globalThis.EventSource = saved.es;
    globalThis.fetch = saved.fetch;
  }
});
