// OpenFeature's own web provider for OFREP (@openfeature/ofrep-web-provider
// on @openfeature/web-sdk) in headless Chromium, on a page of another
// origin: the bulk evaluation resolves every campaign, a re-poll with
// nothing changed is answered 304, and pausing a campaign changes the
// next poll's answer. Skipped, loudly, without Chromium (CHROMIUM names
// another binary).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService } from './service.js';

const chromium = process.env.CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(existsSync);
if (!chromium) {
  console.error('\n*** OpenFeature browser test SKIPPED: no Chromium found (set CHROMIUM=/path/to/chromium) ***\n');
}

const modules = resolve(dirname(fileURLToPath(import.meta.url)), '../node_modules/@openfeature');
const importMap = {
  imports: {
    '@openfeature/core': '/m/core/dist/esm/index.js',
    '@openfeature/web-sdk': '/m/web-sdk/dist/esm/index.js',
    '@openfeature/ofrep-core': '/m/ofrep-core/index.esm.js',
    '@openfeature/ofrep-web-provider': '/m/ofrep-web-provider/index.esm.js',
  },
  // The web provider ships the ofrep-core it was built with.
  scopes: {
    '/m/ofrep-web-provider/': { '@openfeature/ofrep-core': '/m/ofrep-web-provider/node_modules/@openfeature/ofrep-core/index.esm.js' },
  },
};

// The page: resolves the flags, waits for a poll, asks its own origin to
// pause a campaign, waits for the next poll, and writes what it saw.
const pageHTML = `<!doctype html><html><head><script type="importmap">${JSON.stringify(importMap)}</script></head><body><pre id="out">pending</pre>
<script type="module">
import { OpenFeature } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
const q = new URLSearchParams(location.search);
const keys = q.get('keys').split(',');
const statuses = [];
const fetchImplementation = async (...args) => { const r = await fetch(...args); statuses.push(r.status); return r; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const details = () => Object.fromEntries(keys.map((k) => {
  const d = OpenFeature.getClient().getStringDetails(k, 'fallback');
  return [k, { value: d.value, reason: d.reason, errorCode: d.errorCode ?? null }];
}));
const out = {};
try {
  await OpenFeature.setContext({ targetingKey: 'web-user' });
  await OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl: q.get('base'), headers: [['Authorization', 'Bearer ' + q.get('key')]], pollInterval: 1000, fetchImplementation }));
  out.first = details();
  await sleep(2500);
  out.afterPoll = statuses.slice();
  await fetch('/pause');
  await sleep(2500);
  out.afterPause = details();
  out.statuses = statuses.slice();
} catch (e) {
  out.error = String(e && e.stack || e);
}
document.getElementById('out').textContent = JSON.stringify(out);
</script></body></html>`;

let svc;
let page;
let paused;
before(async () => {
  if (!chromium) return;
  svc = await startService();
  page = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/page.html') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(pageHTML);
      return;
    }
    if (path === '/pause') {
      await paused();
      res.writeHead(204).end();
      return;
    }
    const file = resolve(modules, '.' + path.replace(/^\/m/, ''));
    if (!path.startsWith('/m/') || !file.startsWith(modules + sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(await readFile(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => page.listen(0, '127.0.0.1', r));
});
after(async () => {
  await new Promise((r) => (page ? page.close(r) : r()));
  await svc?.stop();
});

function dumpDOM(url) {
  const profile = mkdtempSync(join(tmpdir(), 'sdk-chromium-'));
  return new Promise((ok, fail) => {
    execFile(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      `--user-data-dir=${profile}`, '--virtual-time-budget=30000', '--dump-dom', url],
    { timeout: 120000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      rmSync(profile, { recursive: true, force: true });
      if (err) fail(new Error(`chromium: ${err.message}\n${stderr}`));
      else ok(stdout);
    });
  });
}

test('the web provider resolves every campaign, re-polls with 304, and sees a pause', { skip: !chromium && 'no Chromium' }, async () => {
  const [a, b] = svc.seed.contentViewIds;
  const c = await svc.admin('POST', `/apps/${svc.seed.appId}/campaigns`, {
    name: 'Web banner', status: 'active', endDate: new Date(Date.now() + 30 * 86400e3).toISOString(),
    variants: [{ name: 'Blue', contentViewId: a }, { name: 'Green', contentViewId: b }],
  });
  const { key: hero } = await svc.admin('GET', `/campaigns/${svc.seed.campaignId}`);
  paused = () => svc.admin('PATCH', `/campaigns/${c.id}/status`, { status: 'paused' });
  const { port } = page.address();
  assert.notEqual(String(port), new URL(svc.root).port, 'page and API must be different origins');
  const q = new URLSearchParams({ base: svc.root, key: svc.seed.clientKey, keys: `${hero},${c.key}` });
  const dom = await dumpDOM(`http://127.0.0.1:${port}/page.html?${q}`);
  const m = /<pre id="out">([^<]*)<\/pre>/.exec(dom);
  assert.ok(m && m[1] !== 'pending', `page did not finish:\n${dom}`);
  const out = JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
  assert.equal(out.error, undefined, out.error);
  // Every campaign resolved from the one bulk answer, as the variant route
  // assigns (the paused one resumed to ask it).
  await svc.admin('PATCH', `/campaigns/${c.id}/status`, { status: 'active' });
  for (const [key, id] of [[hero, svc.seed.campaignId], [c.key, c.id]]) {
    const v = await svc.admin('POST', `/apps-external/${svc.seed.appId}/campaigns/${id}/variant`, { userId: 'web-user' });
    assert.deepEqual(out.first[key], { value: v.variantName, reason: 'SPLIT', errorCode: null }, key);
    assert.equal(v.impressionRecorded, false, `${key}: the page's evaluation recorded the impression`);
  }
  assert.equal(out.afterPoll[0], 200);
  assert.ok(out.afterPoll.slice(1).includes(304), `polls: ${out.afterPoll}`);
  // After the pause the next poll's answer changed: the paused campaign is
  // gone from the bulk answer, and the caller gets its default.
  assert.equal(out.afterPause[c.key].value, 'fallback');
  assert.ok(out.afterPause[hero].value === out.first[hero].value);
  assert.ok(out.statuses.slice(out.afterPoll.length).includes(200), `statuses: ${out.statuses}`);
});
