// The local evaluator against the server: every case of
// testdata/assignment_vectors.json (answered by the server's variant
// route; see handlers/vectors_test.go) and the hash vectors the Go tests
// run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileCampaign, evaluateCampaign, hashBucket, inNamespace } from '../src/index.js';
import { repoRoot } from './service.js';

const load = (name) => JSON.parse(readFileSync(join(repoRoot, 'testdata', name), 'utf8'));

test('every assignment vector answers what the server answers', () => {
  const doc = load('assignment_vectors.json');
  assert.ok(doc.cases.length >= 5000, `${doc.cases.length} cases`);
  const campaigns = new Map(doc.campaigns.map((e) => [e.id, compileCampaign(e)]));
  for (const c of campaigns.values()) assert.ok(c.local, `campaign ${c.key} is not evaluated locally`);
  const bad = [];
  doc.cases.forEach((k, i) => {
    const r = evaluateCampaign(campaigns.get(k.campaignId), k);
    const got = r.variant ? { variantId: r.variant.id } : { reason: r.reason };
    try {
      assert.deepEqual(got, k.expected);
    } catch {
      bad.push(`case ${i} ${JSON.stringify(k)}: got ${JSON.stringify(got)}`);
    }
  });
  assert.deepEqual(bad.slice(0, 20), [], `${bad.length} of ${doc.cases.length} cases differ`);
});

test('the hash and the namespace match the contract\'s vectors', () => {
  const b = load('assign_buckets.json');
  for (const v of b.seeded) assert.equal(hashBucket(v.seed, v.user), v.bucket, `${v.seed} ${v.user}`);
  // Ids past 2^53 are not exact in JavaScript; the contract stops there.
  for (const v of b.campaigns.filter((x) => Number.isSafeInteger(x.campaign))) assert.equal(hashBucket(`${v.campaign}:`, v.user), v.bucket, `${v.campaign} ${v.user}`);
  const ns = load('namespace_vectors.json');
  for (const v of ns.growthbook) {
    const [id, start, end] = v.namespace;
    assert.equal(inNamespace(id, v.user, start, end), v.in, JSON.stringify(v));
  }
  for (const v of ns.computed) {
    assert.equal(inNamespace(v.namespace, v.user, v.n, v.n + 0.001), true, JSON.stringify(v));
    assert.equal(inNamespace(v.namespace, v.user, 0, v.n), false, JSON.stringify(v));
  }
});

test('a campaign the server must evaluate is not local', () => {
  assert.equal(compileCampaign({ id: 1, evaluation: 'remote', assignmentType: 'weighted', variants: [{ id: 1, trafficAllocation: 100 }] }).local, false);
  assert.equal(compileCampaign({ id: 1, assignmentType: 'round_robin', variants: [{ id: 1, trafficAllocation: 100 }] }).local, false);
  const events = { rules: [{ ruleType: 'event', eventId: 'buy', operator: 'has_performed' }] };
  assert.equal(compileCampaign({ id: 1, assignmentType: 'weighted', audience: events, variants: [{ id: 1, trafficAllocation: 100 }] }).local, false);
});

test('attributes are read as the server reads them after JSON', () => {
  const c = compileCampaign({ id: 3, evaluation: 'local', assignmentType: 'weighted', variants: [{ id: 1, trafficAllocation: 100 }],
    audience: { logic: 'AND', rules: [{ field: 'since', operator: 'greater_than', value: '2024-01-01' }, { field: 'n', operator: 'not_exists' }] } });
  const at = (attributes) => evaluateCampaign(c, { userId: 'u', attributes }).reason ?? 'in';
  assert.equal(at({ since: new Date('2025-03-01T00:00:00Z') }), 'in');
  assert.equal(at({ since: new Date('2023-03-01T00:00:00Z') }), 'not_in_audience');
  assert.equal(at({ since: '2025', n: NaN }), 'in', 'NaN is sent as null');
  assert.equal(at({ since: '2025', n: undefined }), 'in');
  assert.equal(at({ since: '2025', n: 0 }), 'not_in_audience');
  assert.equal(at({ since: new String('2025') }), 'in');
  assert.equal(at(Object.create({ since: '2025' })), 'not_in_audience', 'inherited properties are not sent');
});
