// OpenFeature's own server provider for OFREP (@openfeature/ofrep-provider
// on @openfeature/server-sdk) against the real service: no client of ours
// in between, so what passes here works from any language's OFREP
// provider.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { OpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { startService } from './service.js';

let svc;
let flags;
const end = () => new Date(Date.now() + 30 * 86400e3).toISOString();

before(async () => {
  svc = await startService();
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: svc.root, headers: [['Authorization', `Bearer ${svc.seed.clientKey}`]] }));
  flags = OpenFeature.getClient();
});
after(async () => {
  await OpenFeature.close();
  await svc?.stop();
});

// campaign creates a campaign over the seeded blocks, in status.
async function campaign(key, status, extra = {}) {
  const [a, b] = svc.seed.contentViewIds;
  const c = await svc.admin('POST', `/apps/${svc.seed.appId}/campaigns`, {
    name: key, key, status: 'active', endDate: end(), ...extra,
    variants: [{ name: 'Control', contentViewId: a, isControl: true }, { name: 'Treatment', contentViewId: b }],
  });
  if (status !== 'active') await svc.admin('PATCH', `/campaigns/${c.id}/status`, { status });
  return c;
}

// wire posts an OFREP evaluation as a provider would and answers
// {status, body}.
async function wire(path, context, headers = {}) {
  const res = await fetch(`${svc.root}/ofrep/v1/evaluate/flags${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${svc.seed.clientKey}`, 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ context }),
  });
  return { status: res.status, etag: res.headers.get('etag'), body: res.status === 304 ? null : await res.json() };
}

test('1,000 users get through OpenFeature the variant names the variant route gives them', async () => {
  const { key } = await svc.admin('GET', `/campaigns/${svc.seed.campaignId}`);
  const users = Array.from({ length: 1000 }, (_, i) => `of-user-${i}`);
  const seen = new Set();
  // In batches, as many users at once would ask.
  for (let i = 0; i < users.length; i += 50) {
    await Promise.all(users.slice(i, i + 50).map(async (u) => {
      const d = await flags.getStringDetails(key, 'no-variant', { targetingKey: u });
      const res = await fetch(`${svc.base}/apps-external/${svc.seed.appId}/campaigns/${svc.seed.campaignId}/variant`, {
        method: 'POST', headers: { Authorization: `Bearer ${svc.seed.clientKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ userId: u }),
      });
      const v = await res.json();
      assert.equal(d.errorCode, undefined, `${u}: ${d.errorMessage}`);
      assert.equal(d.value, v.variantName, u);
      assert.equal(d.variant, v.variantName, u);
      assert.equal(d.reason, 'SPLIT', u);
      assert.equal(d.flagMetadata.campaignId, svc.seed.campaignId);
      assert.equal(d.flagMetadata.variantId, v.variantId);
      // OpenFeature assigned the user first: the variant route only reads.
      assert.equal(v.impressionRecorded, false, u);
      seen.add(d.value);
    }));
  }
  assert.equal(seen.size, 2, 'both variants are handed out');
  const a = await svc.admin('GET', `/campaigns/${svc.seed.campaignId}/analytics`);
  assert.ok(a.totalImpressions >= 1000, `impressions ${a.totalImpressions}`);
});

test('a targeted campaign answers TARGETING_MATCH to its audience and DEFAULT to others', async () => {
  const aud = await svc.admin('POST', `/apps/${svc.seed.appId}/audiences`, {
    name: 'Pro plan', definition: { logic: 'AND', rules: [{ field: 'plan', operator: 'equals', value: 'pro' }] },
  });
  const c = await campaign('of-targeted', 'active', { audienceId: aud.id });
  const d = await flags.getStringDetails('of-targeted', 'default', { targetingKey: 'of-pro', plan: 'pro' });
  assert.equal(d.reason, 'TARGETING_MATCH');
  assert.ok(['Control', 'Treatment'].includes(d.value));
  // Outside the audience there is no value: the caller's default. The
  // server provider reports that as a type mismatch, so the reason is
  // read on the wire.
  const out = await flags.getStringDetails('of-targeted', 'default', { targetingKey: 'of-free', plan: 'free' });
  assert.equal(out.value, 'default');
  const w = await wire('/of-targeted', { targetingKey: 'of-free', plan: 'free' });
  assert.equal(w.status, 200);
  assert.deepEqual(w.body, { key: 'of-targeted', reason: 'DEFAULT', metadata: { campaignId: c.id, reason: 'not_in_audience' } });
});

test('a paused campaign gives the caller its default, DISABLED on the wire', async () => {
  const c = await campaign('of-paused', 'active');
  const before = await flags.getStringDetails('of-paused', 'fallback', { targetingKey: 'of-p1' });
  assert.ok(['Control', 'Treatment'].includes(before.value));
  await svc.admin('PATCH', `/campaigns/${c.id}/status`, { status: 'paused' });
  const d = await flags.getStringDetails('of-paused', 'fallback', { targetingKey: 'of-p1' });
  assert.equal(d.value, 'fallback');
  const w = await wire('/of-paused', { targetingKey: 'of-p1' });
  assert.deepEqual(w.body, { key: 'of-paused', reason: 'DISABLED', metadata: { campaignId: c.id } });
});

test('an unknown key is FLAG_NOT_FOUND and the default', async () => {
  const d = await flags.getStringDetails('of-no-such-flag', 'fallback', { targetingKey: 'of-u' });
  assert.equal(d.value, 'fallback');
  assert.equal(d.errorCode, 'FLAG_NOT_FOUND');
  assert.equal(d.reason, 'ERROR');
});

test('the X-API-Key header works too, and a bad key is refused in OFREP shape', async () => {
  const provider = new OFREPProvider({ baseUrl: svc.root, headers: { 'X-API-Key': svc.seed.clientKey } });
  await OpenFeature.setProviderAndWait('x-api-key', provider);
  const d = await OpenFeature.getClient('x-api-key').getStringDetails('homepage-hero', 'fallback', { targetingKey: 'of-x' });
  assert.equal(d.reason, 'SPLIT');
  const bad = await wire('/homepage-hero', { targetingKey: 'of-x' }, { Authorization: 'Bearer sk_c_nope' });
  assert.equal(bad.status, 401);
  assert.equal(bad.body.errorCode, 'GENERAL');
  assert.equal(bad.body.key, 'homepage-hero');
});

test('bulk evaluation lists every active campaign and answers 304 to its own ETag', async () => {
  const first = await wire('', { targetingKey: 'of-bulk' });
  assert.equal(first.status, 200);
  assert.ok(first.etag);
  const keys = first.body.flags.map((f) => f.key);
  assert.ok(keys.includes('homepage-hero') && keys.includes('of-targeted'), keys.join());
  const again = await wire('', { targetingKey: 'of-bulk' }, { 'If-None-Match': first.etag });
  assert.equal(again.status, 304);
  const other = await wire('', { targetingKey: 'of-bulk-2' }, { 'If-None-Match': first.etag });
  assert.equal(other.status, 200);
  assert.notEqual(other.etag, first.etag);
});
