// Starts the real service binary for integration tests: built once per
// test run with `go build`, served on a temporary database, seeded
// through the CLI. With SERVICE_TEST_STORE=postgres (as Go's suites take
// it) the database is a new one on SERVICE_TEST_POSTGRES_URL's server
// (scripts/with-postgres.sh sets it), dropped when the service stops.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** buildService compiles the binary into dir (or uses SERVICE_BIN). */
export function buildService(dir) {
  if (process.env.SERVICE_BIN) return resolve(process.env.SERVICE_BIN);
  const bin = join(dir, 'service');
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, CGO_ENABLED: '0' } });
  return bin;
}

const pgSelected = process.env.SERVICE_TEST_STORE === 'postgres';

// psql runs one statement as the server's admin. PG_BINDIR is the
// throwaway server's (scripts/with-postgres.sh), so the client matches it.
function psql(admin, sql) {
  const bin = process.env.PG_BINDIR && existsSync(join(process.env.PG_BINDIR, 'psql')) ? join(process.env.PG_BINDIR, 'psql') : 'psql';
  execFileSync(bin, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', admin, '-c', sql], { stdio: ['ignore', 'ignore', 'inherit'] });
}

let pgSeq = 0;

// database answers where a service keeps its data: a SQLite file in dir,
// or in the PostgreSQL run a new, empty database (seed migrates it), named
// by process and sequence as internal/pgtest names Go tests' databases so
// that parallel test files never share one; drop removes it.
function database(dir) {
  if (!pgSelected) return { db: join(dir, 'data.db'), drop() {} };
  const admin = process.env.SERVICE_TEST_POSTGRES_URL;
  // A PostgreSQL run that quietly fell back to SQLite would prove nothing.
  if (!admin) throw new Error('SERVICE_TEST_STORE=postgres needs SERVICE_TEST_POSTGRES_URL (run through scripts/with-postgres.sh)');
  const name = `sdk_${process.pid}_${++pgSeq}`;
  psql(admin, `CREATE DATABASE ${name}`);
  const u = new URL(admin);
  u.pathname = `/${name}`;
  let dropped = false;
  return {
    db: u.toString(),
    drop() {
      if (dropped) return;
      dropped = true;
      psql(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * startService builds, seeds and serves a fresh database on a free port.
 * It answers {base, seed, admin(method, path, body), stop()}; base ends
 * with /v1.
 */
export async function startService() {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-it-'));
  const bin = buildService(dir);
  const { db, drop } = database(dir);
  let seed;
  try {
    seed = JSON.parse(execFileSync(bin, ['seed', '--db', db], { encoding: 'utf8' }));
  } catch (err) {
    drop();
    throw err;
  }
  const proc = spawn(bin, ['serve', '--db', db, '--addr', '127.0.0.1:0', '--shutdown-timeout', '3s'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const addr = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`service did not start within 30 s: ${stderr}`)), 30000);
    proc.stderr.on('data', (b) => {
      stderr += b;
      const m = /"msg":"serving"[^\n]*"addr":"([^"]+)"/.exec(stderr);
      if (m) { clearTimeout(timer); res(m[1]); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); rej(new Error(`service exited with ${code}: ${stderr}`)); });
  }).catch((err) => {
    // A server the run did not start keeps what is not dropped here.
    if (proc.exitCode === null) proc.kill('SIGKILL');
    drop();
    throw err;
  });
  proc.stderr.resume();
  const root = `http://${addr}`;
  const base = `${root}/v1`;
  const admin = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${seed.adminKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    return data;
  };
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    drop();
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  };
  return { bin, root, base, seed, admin, stop, dir };
}

/** closedPort answers a local port that nothing listens on: a service that is down. */
export async function closedPort() {
  const srv = createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}
