// The package as users get it: `npm pack`, installed into an empty folder,
// imported from Node and type-checked from TypeScript.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('the npm pack tarball installs into an empty project and imports', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-pack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], pkgDir));
  const files = packed[0].files.map((f) => f.path).sort();
  assert.deepEqual(files, ['README.md', 'package.json', 'src/index.d.ts', 'src/index.js']);
  const tarball = join(dir, packed[0].filename);

  const app = join(dir, 'app');
  execFileSync('mkdir', [app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  // No runtime dependencies, so the install needs no registry.
  npm(['install', '--offline', '--no-audit', '--no-fund', tarball], app);

  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { createClient, renderContent, ServiceError, VERSION } from '${pkg.name}';
    const c = createClient({ key: 'sk_c_x', appId: 1, flushInterval: 0 });
    console.log(JSON.stringify({ VERSION, client: typeof c.getVariant, render: typeof renderContent, err: new ServiceError('X', 'y') instanceof Error }));
    await c.close();
  `], { cwd: app, encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), { VERSION: pkg.version, client: 'function', render: 'function', err: true });

  // TypeScript finds the shipped types through the package's exports.
  writeFileSync(join(app, 'main.ts'), `
    import { createClient, type VariantAnswer } from '${pkg.name}';
    const c = createClient({ key: 'k', appId: 1 });
    export async function f(): Promise<VariantAnswer> { return c.getVariant(1, { userId: 'u' }); }
  `);
  execFileSync(process.execPath, [join(pkgDir, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict',
    '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', 'main.ts'], { cwd: app, encoding: 'utf8' });
});
