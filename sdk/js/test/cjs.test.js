// The CommonJS form of the SDK (src/index.cjs, src/index.d.cts), which
// scripts/build-cjs.mjs writes from the ES module source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { outputs, cjsOf, srcDir } from '../scripts/build-cjs.mjs';
import * as esm from '../src/index.js';
import { fakeFetch, batchOK } from './fakes.js';

const require = createRequire(import.meta.url);

test('the committed CommonJS files are what the build writes from the sources', () => {
  for (const [file, text] of Object.entries(outputs())) {
    assert.ok(readFileSync(join(srcDir, file), 'utf8') === text, `src/${file} is out of date: run npm run build`);
  }
});

test('require() gives the same exports, and they work', async () => {
  const cjs = require('../src/index.cjs');
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).sort());
  assert.equal(cjs.VERSION, esm.VERSION);
  const f = fakeFetch(batchOK);
  const c = cjs.createClient({ key: 'sk_c_x', appId: 1, baseUrl: 'http://svc.test', fetch: f, storage: cjs.memoryStorage(), flushInterval: 0 });
  await c.track('a');
  assert.deepEqual(await c.close(), { sent: 1, dropped: 0, pending: 0 });
  assert.equal(f.calls[0].url, 'http://svc.test/v1/apps/1/events/batch');
  assert.throws(() => cjs.createClient({}), (e) => e instanceof cjs.ServiceError && e.code === 'INVALID_ARGUMENT');
});

test('the translation refuses what it cannot translate', () => {
  assert.throws(() => cjsOf("import x from 'y';\nexport const a = 1;\n"), /index\.js:1: an import/);
  assert.throws(() => cjsOf('const a = 1;\nexport { a };\n'), /index\.js:2: only/);
  assert.throws(() => cjsOf('export default 1;\n'), /index\.js:1: only/);
  assert.throws(() => cjsOf('const a = import.meta.url;\nexport const b = 1;\n'), /an import/);
  assert.throws(() => cjsOf('const a = 1;\n'), /exports nothing/);
  assert.equal(cjsOf('export const a = 1;\nexport async function f() {}\nexport class C {}\n').split('\n').slice(1).join('\n'),
    "'use strict';\n\nconst a = 1;\nasync function f() {}\nclass C {}\n\nmodule.exports = { a, f, C };\n");
});
