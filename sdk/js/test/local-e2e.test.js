// Local mode against the real service: the ruleset, a change reaching
// the client through the stream, remote campaigns asked of the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, memoryStorage } from '../src/index.js';
import { startService } from './service.js';

let svc;
before(async () => { svc = await startService(); });
after(async () => { await svc?.stop(); });

// countingFetch passes requests to the real fetch and records them.
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

async function campaign(key, extra = {}) {
  const [a, b] = svc.seed.contentViewIds;
  const end = new Date(Date.now() + 30 * 86400e3).toISOString();
  return svc.admin('POST', `/apps/${svc.seed.appId}/campaigns`, {
    name: key, key, status: 'active', endDate: end,
    variants: [{ name: 'Control', contentViewId: a, isControl: true }, { name: 'Treatment', contentViewId: b }],
    ...extra,
  });
}

// rulesetWith waits until the client's ruleset satisfies cond.
function rulesetWith(client, cond, what) {
  if (client.ruleset && cond(client.ruleset)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { stop(); reject(new Error(`no ruleset with ${what} within 5 s`)); }, 5000);
    const stop = client.onRulesetChange((rs) => {
      if (!cond(rs)) return;
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
}

const has = (key) => (rs) => rs.campaigns.some((c) => c.key === key);

test('local mode answers as the server does, without the network, and follows changes through the stream', async () => {
  const audience = await svc.admin('POST', `/apps/${svc.seed.appId}/audiences`, {
    name: 'Germany', definition: { rules: [{ field: 'country', operator: 'equals', value: 'DE' }] },
  });
  const local = await campaign('e2e-local', { audienceId: audience.id, namespace: { id: 'e2e', range: [0, 0.6] } });
  const remote = await campaign('e2e-remote', { assignmentType: 'round_robin' });
  const f = countingFetch();
  const c = sdk({ fetch: f, evaluation: 'local' });
  await c.ready();
  await rulesetWith(c, has('e2e-local'), 'the campaign');
  const entry = c.ruleset.campaigns.find((x) => x.key === 'e2e-local');
  assert.equal(entry.evaluation, 'local');
  assert.equal(c.ruleset.campaigns.find((x) => x.key === 'e2e-remote').evaluation, 'remote');

  // Local answers, for users in, out of the audience and out of the
  // namespace, are what the variant route answers them.
  const server = sdk();
  const before = f.calls.length;
  const reasons = new Set();
  for (let i = 0; i < 40; i++) {
    const opts = { userId: `e2e-${i}`, attributes: { country: i % 3 ? 'DE' : 'FR' } };
    const mine = await c.getVariant('e2e-local', opts);
    const theirs = await server.getVariant(local.id, opts);
    assert.equal(mine.variantId, theirs.variantId, `user ${i}`);
    assert.equal(mine.reason, theirs.reason, `user ${i}`);
    reasons.add(mine.reason ?? 'assigned');
    if (mine.variantId) assert.deepEqual(mine.contentView, theirs.contentView);
  }
  assert.deepEqual([...reasons].sort(), ['assigned', 'not_in_audience', 'not_in_namespace']);
  // (A conditional download of the ruleset, on the stream's connection,
  // may happen meanwhile: it is not getVariant's.)
  const asked = () => f.calls.slice(before).filter((x) => !x.includes('/ruleset'));
  assert.deepEqual(asked(), [], 'local getVariant went to the network');

  // A remote campaign is asked of the server.
  const r = await c.getVariant('e2e-remote', { userId: 'e2e-r' });
  assert.equal(r.impressionRecorded, true);
  assert.deepEqual(asked(), [`POST /v1/apps-external/${svc.seed.appId}/campaigns/e2e-remote/variant`]);
  assert.ok(f.calls.includes(`GET /v1/apps-external/${svc.seed.appId}/ruleset/stream`), 'the stream was followed');

  // A campaign started through the admin API reaches the client through
  // the stream and is answered locally; a paused one leaves it, and the
  // server says why.
  const later = await campaign('e2e-later');
  await rulesetWith(c, has('e2e-later'), 'the new campaign');
  // The exposures of users the variant route already assigned are
  // recorded again, as nothing new.
  const errors = [];
  c.options.onError = (e) => errors.push(e);
  await c.flush();
  assert.deepEqual(errors, []);
  const calls = f.calls.length;
  const shown = {};
  for (let i = 0; i < 10; i++) shown[`x-${i}`] = (await c.getVariant('e2e-later', { userId: `x-${i}` })).variantId;
  // The exposures go in one batch, and count as the variant route's
  // first assignments would.
  assert.equal(c.exposureQueueSize, 10);
  await c.flush();
  assert.equal(c.exposureQueueSize, 0);
  assert.deepEqual(f.calls.slice(calls).filter((x) => !x.includes('/ruleset')), [`POST /v1/apps-external/${svc.seed.appId}/exposures`]);
  const report = await svc.admin('GET', `/campaigns/${later.id}/analytics`);
  assert.equal(report.totalImpressions, 10);
  for (const v of report.variants) assert.equal(v.impressions, Object.values(shown).filter((id) => id === v.variantId).length, v.variantName);
  const again = await server.getVariant(later.id, { userId: 'x-3' });
  assert.equal(again.variantId, shown['x-3']);
  assert.equal(again.impressionRecorded, false, 'the exposure was the first assignment');
  await svc.admin('PATCH', `/campaigns/${local.id}/status`, { status: 'paused' });
  await rulesetWith(c, (rs) => !has('e2e-local')(rs), 'the campaign paused');
  assert.deepEqual(await c.getVariant('e2e-local', { userId: 'e2e-1', attributes: { country: 'DE' } }),
    { campaignId: local.id, variantId: null, reason: 'campaign_not_active' });
  assert.ok(f.calls.includes(`POST /v1/apps-external/${svc.seed.appId}/campaigns/e2e-local/variant`));
  void remote;
  await server.close();
  await c.close();
});

test('bootstrap answers at once from a ruleset another client holds', async () => {
  await campaign('e2e-boot');
  const first = sdk({ evaluation: 'local', stream: false });
  await first.ready();
  const f = countingFetch();
  const second = sdk({ fetch: f, evaluation: 'local', bootstrap: first.ruleset, stream: false, sessionId: 'boot-session' });
  const v = second.getVariantSync('e2e-boot');
  assert.equal(typeof v.variantId, 'number');
  assert.deepEqual(f.calls, []);
  second._exposures.length = 0;
  await first.close();
  await second.close();
});
