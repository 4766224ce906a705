// GrowthBook's own SDK, given the service's GrowthBook payload, assigns
// users exactly as the server's variant route does: the same variant, and
// no variant where the server answers not_in_audience or not_in_namespace.
// Its trackingCallback's exposures are then recorded by the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { GrowthBook } from '@growthbook/growthbook';
import { startService } from './service.js';

let svc;
before(async () => { svc = await startService(); });
after(async () => { agent.destroy(); await svc?.stop(); });

// Campaigns with weights (uneven, thirds, a zero), namespaces and audiences
// over every attribute operator, and two that stay on the server.
const audiences = {
  and: { logic: 'AND', rules: [
    { field: 'country', operator: 'in', value: ['DE', 'AT', 5] },
    { field: 'age', operator: 'greater_than_or_equal', value: 18 },
    { field: 'plan', operator: 'not_equals', value: 'free' },
    { field: 'email', operator: 'ends_with', value: '@example.com' },
  ] },
  or: { logic: 'OR', rules: [
    { field: 'email', operator: 'contains', value: 'a.b' },
    { field: 'name', operator: 'starts_with', value: '(x' },
    { field: 'since', operator: 'less_than', value: '2024-06-01' },
    { field: 'beta', operator: 'equals', value: true },
    { field: 'score', operator: 'less_than', value: 2.5 },
  ] },
  negatives: { logic: 'AND', rules: [
    { field: 'country', operator: 'not_in', value: ['FR', 'de'] },
    { field: 'email', operator: 'not_contains', value: 'spam' },
    { field: 'vip', operator: 'not_exists' },
    { field: 'age', operator: 'exists' },
    { field: 'age', operator: 'less_than', value: 65 },
    { field: 'since', operator: 'greater_than', value: '2020' },
  ] },
  events: { rules: [{ ruleType: 'event', eventId: 'buy', operator: 'has_performed' }] },
};

const campaigns = [
  { key: 'gb-weights', weights: [20, 30, 50] },
  { key: 'gb-thirds', weights: [33.33, 33.33, 33.34], namespace: { id: 'gb-ns', range: [0.2, 0.7] } },
  { key: 'gb-zero', weights: [0, 100] },
  { key: 'gb-and', weights: [50, 50], audience: 'and' },
  { key: 'gb-or', weights: [10, 90], audience: 'or', namespace: { id: 'gb-ns', range: [0.7, 1] } },
  { key: 'gb-neg', weights: [25, 25, 50], audience: 'negatives', namespace: { id: 'gb-other', range: [0, 0.6] } },
  { key: 'gb-rr', weights: [50, 50], assignmentType: 'round_robin', remote: true },
  { key: 'gb-events', weights: [50, 50], audience: 'events', remote: true },
];

const pick = (list, i) => list[i % list.length];
const MISSING = Symbol('missing');

// attributesOf gives user i attributes of every type, so that the guards
// against GrowthBook's loose comparisons are exercised.
function attributesOf(i) {
  const h = (i * 2654435761) >>> 0;
  const vals = {
    country: pick(['DE', 'AT', 'FR', 'de', 5, '5', null, MISSING, ['DE'], 'DE '], h),
    age: pick([17, 18, 30, 64, 65, '30', null, MISSING, true, 18.5], h >>> 4),
    plan: pick(['free', 'pro', MISSING, true, null, 'Free'], h >>> 8),
    email: pick(['x@example.com', 'a.b@example.com', 'x@example.org', 'spam@example.com', 5, MISSING, 'ab@example.com', null], h >>> 12),
    name: pick(['(x) y', 'x', '(X', MISSING, 7, ['(x']], h >>> 16),
    since: pick(['2024-05-31', '2024-06-01', '2019-12-31', '2021', MISSING, 20230101, null], h >>> 19),
    beta: pick([true, false, 'true', 1, MISSING], h >>> 22),
    score: pick([1, 2.5, 2.49, '2', MISSING, null], h >>> 25),
    vip: pick([MISSING, MISSING, MISSING, true, null, 0], h >>> 28),
  };
  const out = {};
  for (const [k, v] of Object.entries(vals)) if (v !== MISSING) out[k] = v;
  return out;
}

function userOf(i) {
  // Mostly plain ids, some outside ASCII and outside the BMP.
  return pick([`user-${i}`, `ü-${i}`, `${i}-😀`, `U${i}`], i);
}

// post sends a JSON POST on kept-alive connections: fetch costs the test
// more CPU per request than the server's answer does.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function post(path, body) {
  const url = new URL(svc.base + path);
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: {
      Authorization: `Bearer ${svc.seed.clientKey}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`${path}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function get(path) {
  const res = await fetch(svc.base + path, { headers: { Authorization: `Bearer ${svc.seed.clientKey}` } });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return res.json();
}

// inParallel runs fn over 0..n-1, limit at a time.
async function inParallel(n, limit, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < n) {
      const i = next++;
      await fn(i);
    }
  }));
}

test("GrowthBook's SDK assigns as the server does", async () => {
  const app = svc.seed.appId;
  const blocks = [];
  for (const name of ['gb A', 'gb B', 'gb C']) {
    const c = await svc.admin('POST', `/apps/${app}/content`, { name, status: 'published', items: [{ type: 'text', content: name, styles: {} }] });
    blocks.push(c.id);
  }
  const audienceIds = {};
  for (const [name, definition] of Object.entries(audiences)) {
    audienceIds[name] = (await svc.admin('POST', `/apps/${app}/audiences`, { name: `gb ${name}`, definition })).id;
  }
  const created = {};
  for (const c of campaigns) {
    const body = {
      name: c.key, key: c.key, endDate: '2099-01-01T00:00:00Z',
      variants: c.weights.map((w, i) => ({ name: `${c.key} v${i}`, contentViewId: blocks[i], trafficAllocation: w })),
    };
    if (c.namespace) body.namespace = c.namespace;
    if (c.audience) body.audienceId = audienceIds[c.audience];
    if (c.assignmentType) body.assignmentType = c.assignmentType;
    const made = await svc.admin('POST', `/apps/${app}/campaigns`, body);
    await svc.admin('PATCH', `/campaigns/${made.id}/status`, { status: 'active' });
    created[c.key] = made;
  }

  const payload = await get(`/apps-external/${app}/growthbook/features`);
  assert.equal(typeof payload.dateUpdated, 'string');
  for (const c of campaigns) {
    assert.equal(c.key in payload.features, !c.remote, `${c.key} in the payload`);
  }
  const local = campaigns.filter((c) => !c.remote);
  const rule = payload.features['gb-thirds'].rules[0];
  assert.deepEqual(
    { ...rule, ranges: undefined },
    { key: 'gb-thirds', variations: ['gb-thirds v0', 'gb-thirds v1', 'gb-thirds v2'], weights: [0.3333, 0.3333, 0.3334], coverage: 1,
      hashAttribute: 'id', hashVersion: 2, seed: `${created['gb-thirds'].id}:`, namespace: ['gb-ns', 0.2, 0.7],
      meta: created['gb-thirds'].variants.map((v) => ({ key: String(v.id), name: v.name })), ranges: undefined },
  );

  const gbAssign = (i) => {
    const userId = userOf(i);
    const gb = new GrowthBook({ attributes: { ...attributesOf(i), id: userId, userId }, features: payload.features });
    const out = {};
    for (const c of local) {
      const r = gb.evalFeature(c.key).experimentResult;
      if (r && r.inExperiment) out[c.key] = Number(r.key);
    }
    gb.destroy();
    return out;
  };

  const N = 10000;
  const bad = [];
  let assigned = 0;
  let outside = 0;
  const byId = new Map(local.map((c) => [created[c.key].id, c.key]));
  await inParallel(N, 64, async (i) => {
    const userId = userOf(i);
    const server = {};
    for (const a of (await post(`/apps-external/${app}/variants`, { userId, attributes: attributesOf(i) })).data) {
      if (byId.has(a.campaignId)) server[byId.get(a.campaignId)] = a.variantId;
    }
    const gb = gbAssign(i);
    assigned += Object.keys(server).length;
    outside += local.length - Object.keys(server).length;
    try {
      assert.deepEqual(gb, server);
    } catch {
      bad.push(`${JSON.stringify(userId)} ${JSON.stringify(attributesOf(i))}: GrowthBook ${JSON.stringify(gb)}, server ${JSON.stringify(server)}`);
    }
  });
  assert.deepEqual(bad.slice(0, 10), [], `${bad.length} of ${N} users differ`);
  // Both answers were exercised widely.
  assert.ok(assigned > N && outside > N, `assigned ${assigned}, not in the experiment ${outside}`);

  // The docs' snippet: GrowthBook's trackingCallback posts exposures for
  // users the server has not seen; the server records every one, and the
  // variant route then answers them without counting again.
  const exposures = [];
  const fresh = Array.from({ length: 300 }, (_, j) => N + j);
  for (const i of fresh) {
    const userId = userOf(i);
    const gb = new GrowthBook({
      attributes: { ...attributesOf(i), id: userId, userId },
      features: payload.features,
      trackingCallback: (experiment, result) => {
        exposures.push({ campaignId: parseInt(experiment.seed, 10), variantId: Number(result.key), userId, attributes: attributesOf(i) });
      },
    });
    for (const c of local) gb.evalFeature(c.key);
    gb.destroy();
  }
  assert.ok(exposures.length > 300, `${exposures.length} exposures`);
  for (let k = 0; k < exposures.length; k += 100) {
    const chunk = exposures.slice(k, k + 100);
    const res = await post(`/apps-external/${app}/exposures`, { exposures: chunk });
    const refused = res.data.filter((r) => !r.recorded);
    assert.deepEqual(refused, [], JSON.stringify(refused.slice(0, 3).map((r) => [chunk[r.index], r.reason])));
  }
  for (const x of exposures.slice(0, 50)) {
    const a = await post(`/apps-external/${app}/campaigns/${x.campaignId}/variant`, { userId: x.userId });
    assert.deepEqual([a.variantId, a.impressionRecorded], [x.variantId, false], JSON.stringify(x));
  }
});
