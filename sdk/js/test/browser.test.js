// The example page, served from its own origin, gets a variant and logs a
// goal through CORS in headless Chromium. Skipped, loudly, without
// Chromium (CHROMIUM names another binary).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, repoRoot } from './service.js';

const chromium = process.env.CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(existsSync);
if (!chromium) {
  console.error('\n*** browser test SKIPPED: no Chromium found (set CHROMIUM=/path/to/chromium) ***\n');
}

let svc;
let page;
before(async () => {
  if (!chromium) return;
  svc = await startService();
  const { serveExamples } = await import(join(repoRoot, 'examples/serve.mjs'));
  page = await serveExamples(0);
});
after(async () => {
  await page?.close();
  await svc?.stop();
});

// dumpDOM loads url in headless Chromium and answers the DOM once the
// page's requests have settled (virtual time stops while fetches run).
function dumpDOM(url) {
  const profile = mkdtempSync(join(tmpdir(), 'sdk-chromium-'));
  return new Promise((resolve, reject) => {
    execFile(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      `--user-data-dir=${profile}`, '--virtual-time-budget=30000', '--dump-dom', url],
    { timeout: 120000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      rmSync(profile, { recursive: true, force: true });
      if (err) reject(new Error(`chromium: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

test('the example page on another origin shows a variant and logs a goal click', { skip: !chromium && 'no Chromium' }, async () => {
  const { seed } = svc;
  const q = new URLSearchParams({ baseUrl: svc.base, key: seed.clientKey, appId: String(seed.appId), campaignId: String(seed.campaignId), userId: 'browser-user', goal: 'purchase', autoclick: '1' });
  assert.notEqual(new URL(page.url).port, new URL(svc.base).port, 'page and API must be different origins');
  const dom = await dumpDOM(`${page.url}/examples/index.html?${q}`);
  assert.match(dom, /data-state="logged"/, `page did not log the goal:\n${dom}`);
  const variant = await svc.admin('POST', `/apps-external/${seed.appId}/campaigns/${seed.campaignId}/variant`, { userId: 'browser-user' });
  assert.ok(dom.includes(`<strong id="variant-name">${variant.variantName}</strong>`), `variant ${variant.variantName} not shown:\n${dom}`);
  assert.equal(variant.impressionRecorded, false, 'the page did not record the impression');
  const events = await svc.admin('GET', `/apps/${seed.appId}/events?eventId=purchase&userId=browser-user`);
  assert.equal(events.count, 1);
  assert.equal(events.data[0].metadata.source, 'example');
  const report = await svc.admin('GET', `/campaigns/${seed.campaignId}/analytics`);
  assert.equal(report.totalConversions, 1);
});

test('a page on an origin outside the app allowedOrigins is stopped by the browser', { skip: !chromium && 'no Chromium' }, async () => {
  const { seed } = svc;
  const { execFileSync } = await import('node:child_process');
  execFileSync(svc.bin, ['apps', 'update', '--db', join(svc.dir, 'data.db'), '--id', String(seed.appId), '--allowed-origins', 'https://shop.example']);
  try {
    // The server rereads the list within a second.
    await new Promise((r) => setTimeout(r, 1500));
    const q = new URLSearchParams({ baseUrl: svc.base, key: seed.clientKey, appId: String(seed.appId), campaignId: String(seed.campaignId), userId: 'blocked-user', autoclick: '1' });
    const dom = await dumpDOM(`${page.url}/examples/index.html?${q}`);
    assert.match(dom, /data-state="error"/, `page was not stopped:\n${dom}`);
    assert.match(dom, /variant failed: NETWORK_ERROR/);
  } finally {
    execFileSync(svc.bin, ['apps', 'update', '--db', join(svc.dir, 'data.db'), '--id', String(seed.appId), '--allowed-origins', '*']);
  }
});
