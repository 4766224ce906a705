// Node processes that end without flush() or close(): their events are
// sent before they exit, and what cannot be sent is told once on stderr.
// Each case is a child node process; the service is the real binary.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startService, closedPort } from './service.js';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
const esmURL = pathToFileURL(join(src, 'index.js')).href;
const cjsPath = join(src, 'index.cjs');

let svc;
let dir;
before(async () => {
  svc = await startService();
  dir = mkdtempSync(join(tmpdir(), 'sdk-exit-'));
});
after(async () => {
  await svc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// node runs script in a child process: an ES module, or CommonJS when
// cjs; it answers {code, stdout, stderr}.
function node(script, { cjs = false, env = {} } = {}) {
  const args = cjs ? ['-e', script] : ['--input-type=module', '-e', script];
  return new Promise((res, rej) => {
    execFile(process.execPath, args, { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30000 }, (err, stdout, stderr) => {
      if (err && err.killed) rej(new Error(`child did not exit: ${stderr}`));
      else res({ code: err ? err.code : 0, stdout, stderr });
    });
  });
}

// A storage in a file, as an app keeps one that outlives its process.
const fileStorage = `
  const fs = require('node:fs');
  const read = () => { try { return JSON.parse(fs.readFileSync(process.env.STORE, 'utf8')); } catch { return {}; } };
  const write = (m) => fs.writeFileSync(process.env.STORE, JSON.stringify(m));
  const fileStorage = {
    async getItem(k) { return read()[k] ?? null; },
    async setItem(k, v) { write({ ...read(), [k]: v }); },
    async removeItem(k) { const m = read(); delete m[k]; write(m); },
  };
`;
const esmFileStorage = `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${fileStorage}`;

async function events(eventId) {
  return (await svc.admin('GET', `/apps/${svc.seed.appId}/events?eventId=${eventId}&limit=100`)).data;
}

test('a script that ends without flush() or close() sends its events before it exits (import and require)', async () => {
  const opts = `{ key: ${JSON.stringify(svc.seed.clientKey)}, appId: ${svc.seed.appId}, baseUrl: ${JSON.stringify(svc.root)} }`;
  const [esm, cjs] = await Promise.all([
    node(`import { createClient } from '${esmURL}';
      const client = createClient(${opts});
      await client.track('exit-esm', { userId: 'exit-1', metadata: { n: 1 } });
      await client.track('exit-esm', { userId: 'exit-1', metadata: { n: 2 } });
      console.log(client.queueSize);`),
    node(`const { createClient } = require(${JSON.stringify(cjsPath)});
      const client = createClient(${opts});
      client.track('exit-cjs', { userId: 'exit-2' }).then(() => console.log(client.queueSize));`, { cjs: true }),
  ]);
  assert.deepEqual(esm, { code: 0, stdout: '2\n', stderr: '' });
  assert.deepEqual(cjs, { code: 0, stdout: '1\n', stderr: '' });
  assert.deepEqual((await events('exit-esm')).map((e) => e.metadata.n).sort(), [1, 2]);
  assert.equal((await events('exit-cjs')).length, 1);
});

test('with the service down, the process exits within flushTimeout and says once how many events were lost or kept; the kept ones go with the next run', async () => {
  const store = join(dir, 'store.json');
  const down = `http://127.0.0.1:${await closedPort()}`;
  const t0 = Date.now();
  const first = await node(`import { createClient, memoryStorage } from '${esmURL}';
    ${esmFileStorage}
    const opts = { key: ${JSON.stringify(svc.seed.clientKey)}, appId: ${svc.seed.appId}, baseUrl: '${down}', flushTimeout: 1000 };
    // closed, its events left in a memory storage: lost
    const closed = createClient({ ...opts, storage: memoryStorage() });
    await closed.track('exit-down', { userId: 'd1' });
    await closed.track('exit-down', { userId: 'd1' });
    console.log(JSON.stringify(await closed.close()));
    // open, in memory (the default in Node): lost
    const open = createClient(opts);
    await open.track('exit-down', { userId: 'd2' });
    // open, in a file: kept
    const kept = createClient({ ...opts, storage: fileStorage });
    const ids = [(await kept.track('exit-kept', { userId: 'd3' })).logId, (await kept.track('exit-kept', { userId: 'd3' })).logId];
    console.log(JSON.stringify(ids));`, { env: { STORE: store } });
  const took = Date.now() - t0;
  assert.equal(first.code, 0);
  const [closed, ids] = first.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(closed, { sent: 0, dropped: 0, pending: 2 });
  const lines = first.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, first.stderr);
  assert.match(lines[0], /^service-sdk: 5 events were not sent before the process exited \(last error: NETWORK_ERROR [^)]*\); 3 are lost, as the client's storage is in memory; 2 stay in the client's storage for the next client\.$/);
  // Two flushes bounded by 1 s, run together, plus close's; with some room for a busy machine.
  assert.ok(took < 1000 * 3 + 5000, `the process took ${took} ms`);
  assert.deepEqual(JSON.parse(JSON.parse(readFileSync(store, 'utf8'))[`svc:${svc.seed.appId}:production:queue`]).map((e) => e.logId), ids);

  // The next run, with the service up, sends the kept events before it exits.
  const second = await node(`${fileStorage}
    const { createClient } = require(${JSON.stringify(cjsPath)});
    createClient({ key: ${JSON.stringify(svc.seed.clientKey)}, appId: ${svc.seed.appId}, baseUrl: ${JSON.stringify(svc.base)}, storage: fileStorage });`,
  { cjs: true, env: { STORE: store } });
  assert.deepEqual(second, { code: 0, stdout: '', stderr: '' });
  assert.deepEqual((await events('exit-kept')).map((e) => e.logId).sort(), [...ids].sort());
  assert.equal((await events('exit-down')).length, 0);
  assert.equal(JSON.parse(readFileSync(store, 'utf8'))[`svc:${svc.seed.appId}:production:queue`], undefined);
});

test('process.exit() with events queued says so on stderr, once', async () => {
  const r = await node(`import { createClient } from '${esmURL}';
    const a = createClient({ key: 'sk_c_x', appId: 1, baseUrl: ${JSON.stringify(svc.root)} });
    await a.track('exit-now');
    process.exit(3);`);
  assert.equal(r.code, 3);
  assert.equal(r.stderr, "service-sdk: 1 event was not sent before the process exited; it is lost, as the client's storage is in memory.\n");
});
