// The SDK against the real service: built once, on a temporary database,
// seeded through the CLI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, memoryStorage, ServiceError } from '../src/index.js';
import { startService, closedPort } from './service.js';
import { mapStorage } from './fakes.js';

let svc;
before(async () => { svc = await startService(); });
after(async () => { await svc?.stop(); });

// countingFetch passes requests to the real fetch and counts them by path.
function countingFetch() {
  const f = async (url, init) => {
    f.calls.push(`${init?.method || 'GET'} ${new URL(url).pathname}`);
    return fetch(url, init);
  };
  f.calls = [];
  return f;
}

function sdk(extra = {}) {
  return createClient({ key: svc.seed.clientKey, appId: svc.seed.appId, baseUrl: svc.base, storage: memoryStorage(), flushInterval: 0, retryBase: 20, retryMax: 200, ...extra });
}

// activeCampaign creates a campaign over the seeded blocks with a goal.
async function activeCampaign(name, goal) {
  const [a, b] = svc.seed.contentViewIds;
  const end = new Date(Date.now() + 30 * 86400e3).toISOString();
  const c = await svc.admin('POST', `/apps/${svc.seed.appId}/campaigns`, {
    name, status: 'active', endDate: end, goalEventId: goal,
    variants: [{ name: 'Control', contentViewId: a, isControl: true }, { name: 'Treatment', contentViewId: b }],
  });
  return c.id;
}

test('a variant is answered, kept, and served from memory on a repeat call', async () => {
  const f = countingFetch();
  const storage = memoryStorage();
  const c = sdk({ fetch: f, storage });
  const v = await c.getVariant(svc.seed.campaignId, { userId: 'it-user-1', attributes: { plan: 'pro' } });
  assert.equal(v.campaignId, svc.seed.campaignId);
  assert.equal(typeof v.variantId, 'number');
  assert.equal(v.impressionRecorded, true);
  assert.ok(Array.isArray(v.contentView.items) && v.contentView.items.length > 0);
  assert.deepEqual(await c.getVariant(svc.seed.campaignId, { userId: 'it-user-1' }), v);
  assert.deepEqual(f.calls, [`POST /v1/apps-external/${svc.seed.appId}/campaigns/${svc.seed.campaignId}/variant`]);
  // The attributes reached the profile.
  const profile = await svc.admin('GET', `/apps/${svc.seed.appId}/users/it-user-1`);
  assert.equal(profile.attributes.plan, 'pro');
  await c.close();

  // Offline, a new client on the same storage answers the stored variant.
  const offline = sdk({ storage, baseUrl: 'http://127.0.0.1:9/v1', retryBase: 1, retryMax: 5 });
  assert.deepEqual(await offline.getVariant(svc.seed.campaignId, { userId: 'it-user-1' }), v);
  await assert.rejects(offline.getVariant(svc.seed.campaignId, { userId: 'never-seen' }), (e) => e instanceof ServiceError && e.code === 'NETWORK_ERROR');
  await offline.close();
});

test("getVariant by the campaign's key answers what its id answers", async () => {
  const { key } = await svc.admin('GET', `/campaigns/${svc.seed.campaignId}`);
  assert.match(key, /^[a-z0-9][a-z0-9_.-]*$/);
  const c = sdk();
  const byKey = await c.getVariant(key, { userId: 'it-key-user' });
  const byID = await c.getVariant(svc.seed.campaignId, { userId: 'it-key-user' });
  assert.equal(byKey.campaignId, svc.seed.campaignId);
  assert.equal(byKey.variantId, byID.variantId);
  assert.equal(byKey.impressionRecorded, true);
  assert.equal(byID.impressionRecorded, false);
  await assert.rejects(c.getVariant('no-such-campaign', { userId: 'it-key-user' }), (e) => e instanceof ServiceError && e.status === 404);
  await c.close();
});

test('getVariants, identify and getContent reach the service', async () => {
  const c = sdk();
  const all = await c.getVariants({ userId: 'it-user-2' });
  assert.ok(all.data.some((v) => v.campaignId === svc.seed.campaignId));
  await c.identify('it-user-2', { country: 'NO' });
  assert.equal((await svc.admin('GET', `/apps/${svc.seed.appId}/users/it-user-2`)).attributes.country, 'NO');
  const block = await c.getContent(svc.seed.contentViewIds[0]);
  assert.equal(block.id, svc.seed.contentViewIds[0]);
  await assert.rejects(c.getContent(999999), (e) => e.code === 'NOT_FOUND' && e.status === 404);
  await c.close();
});

test('events arrive exactly once across a forced retry', async () => {
  let lost = 0;
  // The first batch reaches the service, but its answer is lost: the SDK
  // must send it again, and the logIds must keep it from counting twice.
  const flaky = async (url, init) => {
    const res = await fetch(url, init);
    if (url.endsWith('/events/batch') && lost === 0) {
      lost++;
      throw new TypeError('connection reset');
    }
    return res;
  };
  const c = sdk({ fetch: flaky });
  for (let i = 0; i < 5; i++) await c.track('it-retry', { userId: 'it-user-3', metadata: { i } });
  assert.deepEqual(await c.flush(), { sent: 5, dropped: 0, pending: 0 });
  assert.equal(lost, 1);
  const events = await svc.admin('GET', `/apps/${svc.seed.appId}/events?eventId=it-retry&limit=100`);
  assert.equal(events.count, 5);
  assert.deepEqual(events.data.map((e) => e.metadata.i).sort(), [0, 1, 2, 3, 4]);
  await c.close();
});

test("analytics show the SDK's impressions and conversions", async () => {
  const cid = await activeCampaign('SDK analytics', 'it-goal');
  const c = sdk();
  const users = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
  const assigned = {};
  for (const u of users) assigned[u] = (await c.getVariant(cid, { userId: u })).variantId;
  // Half convert; one converts twice, which counts once.
  for (const u of ['a1', 'a2', 'a3']) await c.track('it-goal', { userId: u });
  await c.track('it-goal', { userId: 'a1' });
  await c.track('it-other', { userId: 'a4' });
  assert.equal((await c.flush()).sent, 5);
  const report = await svc.admin('GET', `/campaigns/${cid}/analytics`);
  assert.equal(report.totalImpressions, 6);
  assert.equal(report.totalConversions, 3);
  for (const v of report.variants) {
    const mine = users.filter((u) => assigned[u] === v.variantId);
    assert.equal(v.impressions, mine.length, `impressions of ${v.variantName}`);
    assert.equal(v.conversions, mine.filter((u) => ['a1', 'a2', 'a3'].includes(u)).length, `conversions of ${v.variantName}`);
  }
  await c.close();
});

test('a form submission is stored; bad data is refused with its fields', async () => {
  const block = await svc.admin('POST', `/apps/${svc.seed.appId}/content`, {
    name: 'SDK form', status: 'published',
    items: [{ type: 'form', fields: [{ name: 'email', type: 'email', label: 'Email', required: true }, { name: 'age', type: 'number' }], submitLabel: 'Send' }],
  });
  const c = sdk({ environment: 'it' });
  const sub = await c.submitForm(block.id, { email: 'ann@example.com', age: 41 }, { userId: 'it-user-4' });
  assert.equal(sub.success, true);
  assert.equal(typeof sub.formSubmissionId, 'number');
  const list = await svc.admin('GET', `/apps/${svc.seed.appId}/form-submissions?contentViewId=${block.id}`);
  assert.equal(list.data.length, 1);
  assert.deepEqual(list.data[0].data, { email: 'ann@example.com', age: 41 });
  assert.equal(list.data[0].userId, 'it-user-4');
  assert.equal(list.data[0].environment, 'it');
  assert.equal(list.data[0].sessionId, c.sessionId);
  await assert.rejects(c.submitForm(block.id, { email: 'nope' }), (e) => e instanceof ServiceError &&
    e.status === 400 && e.code === 'INVALID_REQUEST' && typeof e.details.fields['data.email'] === 'string');
  await c.close();
});

test('baseUrl reaches the service with or without /v1', async () => {
  const answers = [];
  for (const baseUrl of [svc.root, `${svc.root}/`, svc.base, `${svc.base}/`]) {
    const f = countingFetch();
    const c = sdk({ baseUrl, fetch: f });
    assert.equal(c.baseUrl, svc.base);
    answers.push(await c.getVariant(svc.seed.campaignId, { userId: 'it-base-user' }));
    assert.deepEqual(f.calls, [`POST /v1/apps-external/${svc.seed.appId}/campaigns/${svc.seed.campaignId}/variant`]);
    await c.close();
  }
  assert.equal(answers[0].impressionRecorded, true);
  for (const a of answers.slice(1)) assert.deepEqual({ ...a, impressionRecorded: true }, answers[0]);
});

// The fields of each answer type in index.d.ts.
const fields = {
  AssignedVariant: ['campaignId', 'contentView', 'contentViewId', 'impressionRecorded', 'variantId', 'variantName'],
  UnassignedVariant: ['campaignId', 'reason', 'variantId'],
  ContentView: ['id', 'items', 'name', 'status'],
  ContentBlock: ['appId', 'createdAt', 'id', 'items', 'name', 'publishedAt', 'status', 'updatedAt'],
  Profile: ['attributes', 'firstSeen', 'lastSeen', 'userId'],
  FormSubmission: ['formSubmissionId', 'submittedAt', 'success'],
  TrackResult: ['logId'],
  FlushResult: ['dropped', 'pending', 'sent'],
};
const keys = (o) => Object.keys(o).sort();

test('every answer has the fields its type declares', async () => {
  const c = sdk();
  const v = await c.getVariant(svc.seed.campaignId, { userId: 'it-types' });
  assert.deepEqual(keys(v), fields.AssignedVariant);
  assert.deepEqual(keys(v.contentView), fields.ContentView);
  const list = await c.getVariants({ userId: 'it-types' });
  assert.deepEqual(keys(list), ['data']);
  for (const a of list.data) assert.deepEqual(keys(a), fields.AssignedVariant);
  const paused = await svc.admin('POST', `/apps/${svc.seed.appId}/campaigns`, {
    name: 'SDK types, draft', variants: [{ name: 'A', contentViewId: svc.seed.contentViewIds[0], isControl: true }, { name: 'B', contentViewId: svc.seed.contentViewIds[1] }],
  });
  const none = await c.getVariant(paused.id, { userId: 'it-types' });
  assert.deepEqual(keys(none), fields.UnassignedVariant);
  assert.equal(none.reason, 'campaign_not_active');

  const p = await c.identify('it-types', { plan: 'pro' });
  assert.deepEqual(keys(p), fields.Profile);
  assert.deepEqual(p.attributes, { plan: 'pro' });
  assert.ok(!Number.isNaN(Date.parse(p.firstSeen)) && !Number.isNaN(Date.parse(p.lastSeen)));

  const block = await c.getContent(svc.seed.contentViewIds[0]);
  assert.deepEqual(keys(block), fields.ContentBlock);
  assert.equal(block.status, 'published');
  assert.equal(typeof block.publishedAt, 'string');

  const form = await svc.admin('POST', `/apps/${svc.seed.appId}/content`, {
    name: 'SDK types form', status: 'published', items: [{ type: 'form', fields: [{ name: 'email', type: 'email' }] }],
  });
  assert.deepEqual(keys(await c.submitForm(form.id, { email: 'a@example.com' })), fields.FormSubmission);
  assert.deepEqual(keys(await c.track('it-types')), fields.TrackResult);
  assert.deepEqual(keys(await c.flush()), fields.FlushResult);
  assert.deepEqual(keys(await c.close()), fields.FlushResult);
});

test('with the service down, flush returns within its default bound; close keeps the events in the given storage for the next client', async () => {
  const storage = mapStorage();
  const down = sdk({ storage, baseUrl: `http://127.0.0.1:${await closedPort()}`, retryBase: undefined, retryMax: undefined });
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await down.track('it-down', { userId: 'it-user-5', metadata: { i } })).logId);
  let t0 = Date.now();
  assert.deepEqual(await down.flush(), { sent: 0, dropped: 0, pending: 3 });
  const took = Date.now() - t0;
  // The default flushTimeout is 5 s (with room for a busy machine); without
  // it, five retries took over 12 s.
  assert.ok(took <= 5000 + 1500, `flush took ${took} ms`);
  t0 = Date.now();
  assert.deepEqual(await down.close(), { sent: 0, dropped: 0, pending: 3 });
  assert.ok(Date.now() - t0 <= 5000 + 1500, `close took ${Date.now() - t0} ms`);
  const stored = JSON.parse(storage.map.get(`svc:${svc.seed.appId}:production:queue`));
  assert.deepEqual(stored.map((e) => e.logId), ids);

  const next = sdk({ storage });
  assert.deepEqual(await next.flush(), { sent: 3, dropped: 0, pending: 0 });
  const events = await svc.admin('GET', `/apps/${svc.seed.appId}/events?eventId=it-down&limit=100`);
  assert.deepEqual(events.data.map((e) => e.logId).sort(), [...ids].sort());
  await next.close();
  assert.equal(storage.map.has(`svc:${svc.seed.appId}:production:queue`), false);
});
