// service-sdk/react under React's own test renderer: no DOM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as React from 'react';
import TestRenderer from 'react-test-renderer';
import { createClient, memoryStorage } from '../src/index.js';
import { ServiceProvider, useVariant, useServiceClient } from '../src/react.js';
import { fakeFetch, json, waitFor } from './fakes.js';

globalThis.IS_REACT_ACT_ENVIRONMENT = true;
// React 19 says once that its test renderer is deprecated; it is still
// React's own renderer without a DOM, which is what these tests need.
const consoleError = console.error;
console.error = (...a) => { if (!String(a[0]).startsWith('react-test-renderer is deprecated')) consoleError(...a); };
const { act } = TestRenderer;
const h = React.createElement;

const ruleset = (version, weights) => ({
  version,
  campaigns: [{
    id: 1, key: 'hero', evaluation: 'local', assignmentType: 'weighted', namespace: null, audience: null,
    variants: [{ id: 10, name: 'A', trafficAllocation: weights[0], contentViewId: 1, isControl: true }, { id: 11, name: 'B', trafficAllocation: weights[1], contentViewId: 1, isControl: false }],
  }],
  contentViews: [{ id: 1, name: 'block', status: 'published', items: [] }],
});

// Shows what useVariant answers, and counts the renders.
function Probe({ campaign, userId, renders }) {
  const { variant, loading, error } = useVariant(campaign, { userId });
  renders.push(loading ? 'loading' : error ? `error:${error.code}` : `${variant.variantName ?? variant.reason}`);
  return h('text', null, renders.at(-1));
}

function stream() {
  let ctl;
  const body = new ReadableStream({ start(c) { ctl = c; } });
  return { res: { ok: true, status: 200, headers: { get: () => null }, body, text: async () => '' }, send: (s) => ctl.enqueue(new TextEncoder().encode(s)) };
}

test('useVariant answers at first render from a bootstrap ruleset, and renders again when a new ruleset changes the variant', async () => {
  let rs = ruleset('v1', [100, 0]);
  const streams = [];
  const f = fakeFetch((req) => {
    if (req.path.endsWith('/ruleset/stream')) { const s = stream(); streams.push(s); return s.res; }
    if (req.path.endsWith('/ruleset')) return req.init.headers['If-None-Match'] === `"${rs.version}"` ? json(304) : json(200, rs);
    return json(200, { data: [] });
  });
  const client = createClient({ key: 'k', appId: 1, baseUrl: 'http://svc.test', fetch: f, storage: memoryStorage(), flushInterval: 0, evaluation: 'local', bootstrap: rs, sessionId: 's' });
  const renders = [];
  let r;
  await act(async () => { r = TestRenderer.create(h(ServiceProvider, { client }, h(Probe, { campaign: 'hero', userId: 'u1', renders }))); });
  assert.equal(renders[0], 'A', 'the first render shows the variant');
  assert.equal(r.toJSON().children[0], 'A');
  await waitFor(() => streams.length === 1, 2000, 'the stream');
  rs = ruleset('v2', [0, 100]);
  await act(async () => { streams[0].send('id: v2\nevent: ruleset\ndata: {"version":"v2"}\n\n'); });
  await act(async () => { await waitFor(() => client.ruleset.version === 'v2', 2000, 'the new ruleset'); });
  await act(async () => { await new Promise((res) => setTimeout(res, 10)); });
  assert.equal(r.toJSON().children[0], 'B');
  const before = renders.length;
  await act(async () => { r.unmount(); });
  assert.equal(renders.length, before);
  client._exposures.length = 0;
  await client.close();
});

test('useVariant is loading until the server answers, and reports errors', async () => {
  let answer;
  const gate = new Promise((res) => { answer = res; });
  const f = fakeFetch(async (req) => {
    if (req.path.endsWith('/campaigns/hero/variant')) { await gate; return json(200, { campaignId: 1, variantId: 10, variantName: 'Remote', contentViewId: 1, contentView: null, impressionRecorded: true }); }
    return json(404, { error: { code: 'NOT_FOUND', message: 'no campaign' } });
  });
  const client = createClient({ key: 'k', appId: 1, baseUrl: 'http://svc.test', fetch: f, storage: memoryStorage(), flushInterval: 0 });
  const renders = [];
  let r;
  await act(async () => {
    r = TestRenderer.create(h(ServiceProvider, { client }, h('group', null, h(Probe, { campaign: 'hero', userId: 'u', renders }), h(Probe, { campaign: 'gone', userId: 'u', renders: [] }))));
  });
  assert.equal(r.toJSON().children[0].children[0], 'loading');
  assert.equal(r.toJSON().children[1].children[0], 'error:NOT_FOUND');
  await act(async () => { answer(); await gate; await new Promise((res) => setTimeout(res, 10)); });
  assert.equal(r.toJSON().children[0].children[0], 'Remote');
  await act(async () => { r.unmount(); });
  await client.close();
});

test('the hook outside a provider says what is missing', () => {
  function Lost() { useServiceClient(); return null; }
  const errors = console.error;
  console.error = () => {};
  try {
    assert.throws(() => { act(() => { TestRenderer.create(h(Lost)); }); }, /ServiceProvider/);
  } finally { console.error = errors; }
});

test('require("service-sdk/react") works as the import does', () => {
  const require = createRequire(import.meta.url);
  const cjs = require('../src/react.cjs');
  assert.deepEqual(Object.keys(cjs).sort(), ['ServiceProvider', 'useServiceClient', 'useVariant']);
});
