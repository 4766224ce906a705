// The package as users get it: `npm pack`, installed into a new CommonJS
// project (what `npm init -y` makes) and a new ES module project, run
// from Node and type-checked from TypeScript, with and without the DOM lib.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
function tsc(cwd, ...args) {
  try {
    return execFileSync(process.execPath, [join(pkgDir, 'node_modules/typescript/bin/tsc'), ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    assert.fail(`tsc ${args.join(' ')}:\n${e.stdout}${e.stderr}`);
  }
}

let dir;
let tarball;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-pack-'));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], pkgDir));
  tarball = join(dir, packed[0].filename);
  assert.deepEqual(packed[0].files.map((f) => f.path).sort(),
    ['README.md', 'package.json', 'src/index.cjs', 'src/index.d.cts', 'src/index.d.ts', 'src/index.js',
      'src/react.cjs', 'src/react.d.cts', 'src/react.d.ts', 'src/react.js']);
  // React is a peer dependency the app brings: an optional one, so the
  // package installs without it.
  assert.deepEqual(pkg.peerDependenciesMeta?.react, { optional: true });
});
after(() => rmSync(dir, { recursive: true, force: true }));

// project makes a new project, `npm init -y` plus the given package.json
// fields, with the tarball installed (no runtime dependencies, so no
// registry is needed).
function project(name, fields = {}) {
  const app = join(dir, name);
  mkdirSync(app);
  npm(['init', '-y'], app);
  const p = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ ...p, ...fields }, null, 2));
  npm(['install', '--offline', '--no-audit', '--no-fund', tarball], app);
  return app;
}

// What both projects print: the package works, and its error class is the
// one the module exports.
const probe = `
  const c = createClient({ key: 'sk_c_x', appId: 1, baseUrl: 'http://127.0.0.1:8080', flushInterval: 0 });
  let refused;
  try { createClient({ key: 'k', appId: 1, baseUrl: 'nowhere' }); } catch (e) { refused = e instanceof ServiceError && e.code; }
  console.log(JSON.stringify({ VERSION, base: c.baseUrl, client: typeof c.getVariant, render: typeof renderContent, refused }));
  c.close();
`;
const probed = { VERSION: pkg.version, base: 'http://127.0.0.1:8080/v1', client: 'function', render: 'function', refused: 'INVALID_ARGUMENT' };

// typecheck runs tsc on file with the tsconfig of a Node project (no DOM
// lib, no @types), or of a page when lib includes "DOM", and answers the
// package's declaration files that it read.
function typecheck(app, file, lib = ['ES2022']) {
  const config = `tsconfig.${file}.json`;
  writeFileSync(join(app, config), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'ES2022', lib, types: [] },
    files: [file],
  }));
  const listed = tsc(app, '-p', config, '--listFiles').split('\n');
  return listed.filter((f) => f.includes(`node_modules/${pkg.name}/`)).map((f) => f.slice(f.lastIndexOf('/') + 1));
}
const typed = (name) => `
  import { createClient, type VariantAnswer, type Profile } from '${name}';
  const c = createClient({ key: 'k', appId: 1, baseUrl: 'http://localhost:8080' });
  export async function f(): Promise<VariantAnswer> { return c.getVariant(1, { userId: 'u' }); }
  export async function g(): Promise<string> { const p: Profile = await c.identify('u', { plan: 'pro' }); return p.firstSeen; }
`;

test('a CommonJS project (npm init -y) requires the package, and type-checks it without the DOM lib', () => {
  const app = project('cjs-app');
  assert.notEqual(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).type, 'module', 'npm init -y made an ES module project');
  writeFileSync(join(app, 'index.js'), `const { createClient, renderContent, ServiceError, VERSION } = require('${pkg.name}');\n${probe}`);
  assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['index.js'], { cwd: app, encoding: 'utf8' })), probed);
  // TypeScript compiles this project's imports to require(), and takes the require types.
  writeFileSync(join(app, 'main.ts'), typed(pkg.name));
  assert.deepEqual(typecheck(app, 'main.ts'), ['index.d.cts']);
});

test('an ES module project imports the package, and type-checks it with and without the DOM lib', () => {
  const app = project('esm-app', { type: 'module' });
  writeFileSync(join(app, 'index.js'), `import { createClient, renderContent, ServiceError, VERSION } from '${pkg.name}';\n${probe}`);
  assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['index.js'], { cwd: app, encoding: 'utf8' })), probed);
  writeFileSync(join(app, 'main.ts'), typed(pkg.name));
  assert.deepEqual(typecheck(app, 'main.ts'), ['index.d.ts']);
  writeFileSync(join(app, 'page.ts'), `${typed(pkg.name)}
  export function show(v: VariantAnswer): HTMLElement | null {
    const el = document.getElementById('hero');
    if (el && v.variantId !== null) c.renderContent(v, el, { onButtonClick: (_item, e) => console.log(e.clientX) });
    return el;
  }
`);
  assert.deepEqual(typecheck(app, 'page.ts', ['ES2022', 'DOM']), ['index.d.ts']);
});

// withReact gives a project the React (and its types) of the SDK's own
// devDependencies, as an app brings its own: linked, so no registry is
// needed.
function withReact(app) {
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
  for (const m of ['react', '@types/react', 'csstype']) symlinkSync(join(pkgDir, 'node_modules', m), join(app, 'node_modules', m), 'dir');
}

const reactProbe = `
  const c = createClient({ key: 'sk_c_x', appId: 1, baseUrl: 'http://127.0.0.1:8080', flushInterval: 0, evaluation: 'local', stream: false,
    bootstrap: { version: 'v', campaigns: [] } });
  const el = React.createElement(ServiceProvider, { client: c }, null);
  console.log(JSON.stringify({ provider: typeof ServiceProvider, hook: typeof useVariant, element: el.type === ServiceProvider }));
  c.close();
`;
const reactProbed = { provider: 'function', hook: 'function', element: true };
const typedReact = (name) => `
  import { createElement } from 'react';
  import { createClient } from '${name}';
  import { ServiceProvider, useVariant, type VariantState } from '${name}/react';
  const client = createClient({ key: 'k', appId: 1, evaluation: 'local' });
  export function Hero() { const s: VariantState = useVariant('hero', { userId: 'u' }); return s.variant; }
  export const app = createElement(ServiceProvider, { client });
`;

test('service-sdk/react: required from a CommonJS project and imported from an ES module project, with its types', () => {
  const cjs = project('react-cjs-app');
  withReact(cjs);
  writeFileSync(join(cjs, 'index.js'), `const React = require('react');\nconst { createClient } = require('${pkg.name}');\nconst { ServiceProvider, useVariant } = require('${pkg.name}/react');\n${reactProbe}`);
  assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['index.js'], { cwd: cjs, encoding: 'utf8' })), reactProbed);
  writeFileSync(join(cjs, 'main.ts'), typedReact(pkg.name));
  assert.deepEqual(typecheck(cjs, 'main.ts').sort(), ['index.d.cts', 'react.d.cts']);

  const esm = project('react-esm-app', { type: 'module' });
  withReact(esm);
  writeFileSync(join(esm, 'index.js'), `import * as React from 'react';\nimport { createClient } from '${pkg.name}';\nimport { ServiceProvider, useVariant } from '${pkg.name}/react';\n${reactProbe}`);
  assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['index.js'], { cwd: esm, encoding: 'utf8' })), reactProbed);
  writeFileSync(join(esm, 'main.ts'), typedReact(pkg.name));
  assert.deepEqual(typecheck(esm, 'main.ts').sort(), ['index.d.ts', 'react.d.ts']);
});
