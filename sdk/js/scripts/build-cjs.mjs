// Writes the CommonJS form of the SDK from its ES module source:
// src/index.cjs from src/index.js, and src/index.d.cts (the same
// declarations, read by TypeScript as CommonJS) from src/index.d.ts.
//
//   node scripts/build-cjs.mjs           write both files
//   node scripts/build-cjs.mjs --check   fail when either is out of date
//
// The source has no imports and exports only declarations
// (`export const|function|class NAME`), so dropping `export` and listing
// the names in module.exports is the whole translation; anything else
// fails the build rather than being translated wrongly.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const srcDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

const header = (from) => `// Generated from ${from} by scripts/build-cjs.mjs (npm run build): do not edit.\n`;

/** cjsOf translates the ES module source to CommonJS. */
export function cjsOf(source, from = 'index.js') {
  const names = [];
  const lines = source.split('\n').map((line, i) => {
    // A whole-module import of a package (react.js's React) is a require.
    const imp = /^import \* as ([A-Za-z_$][\w$]*) from '([a-z@][\w@/.-]*)';$/.exec(line);
    if (imp) return `const ${imp[1]} = require('${imp[2]}');`;
    if (/^\s*import\b(?!\s*\()/.test(line) || /\bimport\.meta\b/.test(line)) {
      throw new Error(`${from}:${i + 1}: an import has no CommonJS translation here`);
    }
    const m = /^export (const|let|function|async function|class) ([A-Za-z_$][\w$]*)/.exec(line);
    if (m) {
      names.push(m[2]);
      return line.slice('export '.length);
    }
    if (/^\s*export\b/.test(line)) throw new Error(`${from}:${i + 1}: only "export const|function|class NAME" is translated`);
    return line;
  });
  if (!names.length) throw new Error(`${from} exports nothing`);
  return `${header(from)}'use strict';\n\n${lines.join('\n').replace(/\n*$/, '\n')}\nmodule.exports = { ${names.join(', ')} };\n`;
}

/** dctsOf answers the CommonJS declarations: the same text. */
export function dctsOf(declarations, from = 'index.d.ts') {
  // The CommonJS declarations import the CommonJS ones.
  return header(from) + declarations.replace(/from '\.\/index\.js'/g, "from './index.cjs'");
}

export function outputs() {
  const read = (f) => readFileSync(join(srcDir, f), 'utf8');
  return {
    'index.cjs': cjsOf(read('index.js')),
    'index.d.cts': dctsOf(read('index.d.ts')),
    'react.cjs': cjsOf(read('react.js'), 'react.js'),
    'react.d.cts': dctsOf(read('react.d.ts'), 'react.d.ts'),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const check = process.argv.includes('--check');
  let stale = 0;
  for (const [file, text] of Object.entries(outputs())) {
    const path = join(srcDir, file);
    let old = null;
    try { old = readFileSync(path, 'utf8'); } catch { /* not written yet */ }
    if (old === text) continue;
    if (check) {
      console.error(`src/${file} is out of date: run npm run build`);
      stale++;
    } else {
      writeFileSync(path, text);
      console.log(`wrote src/${file}`);
    }
  }
  process.exitCode = stale ? 1 : 0;
}
