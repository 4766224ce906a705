// Generated from index.js by scripts/build-cjs.mjs (npm run build): do not edit.
'use strict';

// The JavaScript SDK of the service: variants, events, content and forms
// for browsers, Node 18+ and React Native. It uses only fetch, timers and
// the storage object it is given, so it has no runtime dependencies.
//
// This file is the source. index.cjs, for require(), is generated from it
// by scripts/build-cjs.mjs (`npm run build`); a test keeps the two equal.

const VERSION = '0.1.0';

/** Most events the service accepts in one batch request. */
const MAX_BATCH = 100;

/**
 * ServiceError is every failure the SDK reports: the service's error
 * envelope (code, message, details) with the HTTP status, or one of the
 * SDK's own codes (status 0): NETWORK_ERROR, TIMEOUT, INVALID_ARGUMENT,
 * CLIENT_CLOSED, STORAGE_ERROR.
 */
class ServiceError extends Error {
  constructor(code, message, { status = 0, details = {}, retryAfter, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = status;
    this.details = details && typeof details === 'object' ? details : {};
    if (retryAfter !== undefined) this.retryAfter = retryAfter;
  }

  /** Whether sending the same request again may succeed. */
  get retryable() {
    return this.status === 0 ? this.code === 'NETWORK_ERROR' || this.code === 'TIMEOUT'
      : this.status === 429 || this.status >= 500;
  }
}

// The storages made by memoryStorage: what a client keeps in them ends
// with the process.
const memoryStores = new WeakSet();

/** memoryStorage is an async storage that lives as long as the process. */
function memoryStorage() {
  const m = new Map();
  const s = {
    async getItem(k) { return m.has(k) ? m.get(k) : null; },
    async setItem(k, v) { m.set(k, String(v)); },
    async removeItem(k) { m.delete(k); },
  };
  memoryStores.add(s);
  return s;
}

// localStorage, wrapped to the async interface, where it exists and works
// (it throws in some private modes and sandboxed frames).
function defaultStorage() {
  try {
    const ls = globalThis.localStorage;
    if (ls) {
      const probe = '__svc_probe__';
      ls.setItem(probe, '1');
      ls.removeItem(probe);
      return {
        async getItem(k) { return ls.getItem(k); },
        async setItem(k, v) { ls.setItem(k, v); },
        async removeItem(k) { ls.removeItem(k); },
      };
    }
  } catch { /* fall through to memory */ }
  return memoryStorage();
}

/**
 * backoffDelay is the wait before retry number `attempt` (1-based):
 * exponential from base, capped at max, with "full jitter" (a random
 * share of the step) so that many clients that failed together do not
 * retry together.
 */
function backoffDelay(attempt, base = 500, max = 30000, random = Math.random) {
  const step = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

// parseRetryAfter reads Retry-After (seconds or an HTTP date) in ms.
function parseRetryAfter(v, now = Date.now()) {
  if (v == null || v === '') return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}

function randomId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const b = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(b);
  else for (let i = 0; i < 16; i++) b[i] = Math.floor(Math.random() * 256);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// Timers take at most 2^31-1 ms; a longer delay would fire at once.
const MAX_DELAY = 2147483647;
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.min(ms, MAX_DELAY)));

function invalidArgument(message) {
  return new ServiceError('INVALID_ARGUMENT', message);
}

// A campaign key as the service accepts it: 1 to 64 characters of a-z,
// 0-9, _, . and -, starting with a letter or digit, and not only digits.
const campaignKeyPattern = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** campaignRef reads getVariant's campaign: a positive integer id, or a key. */
function campaignRef(campaign) {
  if (typeof campaign === 'string' && !/^[0-9]+$/.test(campaign)) {
    if (campaignKeyPattern.test(campaign)) return campaign;
    throw invalidArgument('getVariant: campaign must be a positive integer id or a campaign key');
  }
  const cid = Number(campaign);
  if (!Number.isInteger(cid) || cid < 1) throw invalidArgument('getVariant: campaign must be a positive integer id or a campaign key');
  return cid;
}

const defaults = {
  baseUrl: 'http://localhost:8080/v1',
  environment: 'production',
  flushInterval: 5000,
  flushTimeout: 5000,
  maxBatchSize: MAX_BATCH,
  maxQueueSize: 1000,
  maxRetries: 5,
  retryBase: 500,
  retryMax: 30000,
  timeout: 10000,
};

// --- Node: events left at exit -------------------------------------------

// The clients holding events that the process's exit would leave unsent
// (see Client._watchExit). Only they are referenced, and only while they
// hold such events.
const pendingAtExit = new Set();
let exitHooked = false;
let exitToldOnce = false;

// watchExit hooks the process once, in Node only: before it exits, open
// clients flush their queues; when it exits with events still unsent, one
// line on stderr says how many, and whether they are kept or lost.
function watchExit() {
  const proc = globalThis.process;
  if (exitHooked || !proc || typeof proc.on !== 'function' || !proc.versions?.node) return;
  exitHooked = true;
  // beforeExit comes each time the event loop runs dry. A client flushes
  // there once per new event: when the service cannot be reached, the
  // next beforeExit finds nothing new, and the process ends.
  proc.on('beforeExit', () => {
    for (const c of pendingAtExit) {
      if (c._closed || c._exitTried === c._tracked) continue;
      c._exitTried = c._tracked;
      c.flush();
    }
  });
  proc.on('exit', () => {
    if (exitToldOnce) return;
    let lost = 0;
    let kept = 0;
    let why = null;
    for (const c of pendingAtExit) {
      if (c._memoryOnly) lost += c._queue.length;
      else kept += c._queue.length;
      why = why || c._lastError;
    }
    if (!lost && !kept) return;
    exitToldOnce = true;
    const n = lost + kept;
    const parts = [];
    if (lost) parts.push(`${lost === n ? (n === 1 ? 'it is' : 'they are') : lost + (lost === 1 ? ' is' : ' are')} lost, as the client's storage is in memory`);
    if (kept) parts.push(`${kept === n ? (n === 1 ? 'it stays' : 'they stay') : kept + (kept === 1 ? ' stays' : ' stay')} in the client's storage for the next client`);
    const cause = why ? ` (last error: ${why.code} ${why.message})` : '';
    try {
      proc.stderr?.write?.(`service-sdk: ${n === 1 ? '1 event was' : `${n} events were`} not sent before the process exited${cause}; ${parts.join('; ')}.\n`);
    } catch { /* nowhere to say it */ }
  });
}

/**
 * apiBase answers the API base of a baseUrl given with or without its
 * version (https://ab.example.com, https://ab.example.com/v1, a path
 * prefix of a proxy), and throws INVALID_ARGUMENT for what cannot be one.
 * It parses with a pattern, not URL, whose pathname React Native lacks.
 */
function apiBase(baseUrl) {
  const m = typeof baseUrl === 'string' ? /^(https?:\/\/[^/?#\s]+)(\/[^?#\s]*)?$/i.exec(baseUrl.trim()) : null;
  if (!m) {
    throw invalidArgument(`createClient: baseUrl must be an http(s) URL such as "https://ab.example.com" or "https://ab.example.com/v1", without query or fragment; got ${JSON.stringify(baseUrl)}`);
  }
  const path = (m[2] || '').replace(/\/+$/, '');
  if (/\/v1$/.test(path)) return m[1] + path;
  const version = /\/v\d+$/.exec(path);
  if (version) {
    throw invalidArgument(`createClient: baseUrl ends with ${version[0]}, but this SDK speaks /v1: pass "${m[1] + path.slice(0, -version[0].length)}" or "${m[1] + path.slice(0, -version[0].length)}/v1"`);
  }
  return `${m[1] + path}/v1`;
}

// --- local evaluation ---------------------------------------------------

// The server's assignment, ported exactly (assign/assign.go and the
// attribute part of rules/rules.go), so that a campaign evaluated here
// answers what the variant route would. testdata/assignment_vectors.json
// holds the cases both must agree on.
//
// A string reaches the server as JSON, where a lone surrogate is read as
// U+FFFD: hashing and comparisons here read it so too.

const FNV_OFFSET = 2166136261;
const FNV_PRIME = 16777619;
const surrogate = /[\uD800-\uDFFF]/;

// fnvString mixes the UTF-16 units of s into h, a lone surrogate as U+FFFD.
function fnvString(h, s) {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xD800 && c <= 0xDFFF) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xDBFF && d >= 0xDC00 && d <= 0xDFFF) {
        h = Math.imul(h ^ c, FNV_PRIME) >>> 0;
        c = d;
        i++;
      } else c = 0xFFFD;
    }
    h = Math.imul(h ^ c, FNV_PRIME) >>> 0;
  }
  return h;
}

/**
 * hashBucket answers GrowthBook's hash version 2 of userKey under seed,
 * times 10000: fnv1a32(String(fnv1a32(seed + userKey))) % 10000. A
 * campaign's seed is its id followed by ':'.
 */
function hashBucket(seed, userKey) {
  const inner = fnvString(fnvString(FNV_OFFSET, seed), userKey);
  return fnvString(FNV_OFFSET, String(inner)) % 10000;
}

/**
 * inNamespace answers whether userKey falls in [start, end) of the
 * namespace id, as GrowthBook's inNamespace decides it.
 */
function inNamespace(id, userKey, start, end) {
  const n = (fnvString(fnvString(FNV_OFFSET, userKey), `__${id}`) % 1000) / 1000;
  return n >= start && n < end;
}

// pickVariant is assign.Pick: the index whose range holds the bucket,
// boundaries compared in units of 1/10000 from the rounded running sum.
function pickVariant(bucket, weights) {
  let last = -1;
  let sum = 0;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i];
    if (!(w > 0)) continue;
    last = i;
    sum += w;
    // Go's math.Round rounds halves away from zero, Math.round up: the
    // same for the positive sums here.
    if (bucket < Math.round(sum * 100)) return i;
  }
  return last;
}

// wellFormed answers s as the server reads it: lone surrogates as U+FFFD.
function wellFormed(s) {
  if (!surrogate.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xDC00 && d <= 0xDFFF) {
        out += s[i] + s[i + 1];
        i++;
        continue;
      }
    }
    out += c >= 0xD800 && c <= 0xDFFF ? '\uFFFD' : s[i];
  }
  return out;
}

// compareStrings orders well-formed strings by code point, as Go orders
// their UTF-8 bytes; JavaScript's < orders UTF-16 units, which puts an
// astral character before U+E000..U+FFFF.
function compareStrings(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xD800 && y >= 0xD800) {
      // Surrogates (astral code points) sort after U+E000..U+FFFF.
      x += x >= 0xE000 ? -0x800 : 0x2000;
      y += y >= 0xE000 ? -0x800 : 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

// Kinds of values, as rules.go classifies them.
const K_MISSING = 0;
const K_STRING = 2;
const K_NUMBER = 3;
const K_BOOL = 4;
const K_OTHER = 5;

// kindOf answers the kind of an attribute as the server would see it
// after JSON: undefined, functions and non-finite numbers become missing
// or null (both fail every positive operator), a Date its ISO string.
function kindOf(v) {
  switch (typeof v) {
    case 'string': return K_STRING;
    case 'number': return Number.isFinite(v) ? K_NUMBER : K_MISSING;
    case 'boolean': return K_BOOL;
    case 'object':
      if (v === null) return K_MISSING;
      return K_OTHER;
    case 'undefined':
    case 'function':
    case 'symbol':
      return K_MISSING;
    default:
      return K_OTHER;
  }
}

// jsonValue unwraps what JSON.stringify unwraps: toJSON (a Date) and the
// Number, String and Boolean wrappers.
function jsonValue(v) {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    if (typeof v.toJSON === 'function') return v.toJSON('');
    if (v instanceof Number || v instanceof String || v instanceof Boolean) return v.valueOf();
  }
  return v;
}

const OPS = {
  equals: ['eq', false], not_equals: ['eq', true],
  contains: ['contains', false], not_contains: ['contains', true],
  starts_with: ['prefix', false], ends_with: ['suffix', false],
  greater_than: ['gt', false], greater_than_or_equal: ['gte', false],
  less_than: ['lt', false], less_than_or_equal: ['lte', false],
  in: ['in', false], not_in: ['in', true],
  exists: ['exists', false], not_exists: ['exists', true],
};

const hasOwn = Object.prototype.hasOwnProperty;

function ruleValue(v) {
  return typeof v === 'string' ? wellFormed(v) : v;
}

// compileRule answers a rule's test of one attribute value, or null when
// the rule is not one this evaluator knows (an event rule).
function compileRule(r) {
  if (!r || typeof r !== 'object' || (r.ruleType != null && r.ruleType !== 'attribute')) return null;
  const op = OPS[r.operator];
  if (!op || typeof r.field !== 'string') return null;
  const [base, negate] = op;
  const field = r.field;
  let test;
  const val = ruleValue(r.value);
  const vk = kindOf(val);
  switch (base) {
    case 'eq':
      test = (k, v) => k === vk && v === val;
      break;
    case 'contains':
      test = (k, v) => k === K_STRING && v.includes(val);
      break;
    case 'prefix':
      test = (k, v) => k === K_STRING && v.startsWith(val);
      break;
    case 'suffix':
      test = (k, v) => k === K_STRING && v.endsWith(val);
      break;
    case 'gt': case 'gte': case 'lt': case 'lte': {
      const cmp = vk === K_NUMBER ? (v) => (v < val ? -1 : v > val ? 1 : 0) : (v) => compareStrings(v, val);
      const want = { gt: (c) => c > 0, gte: (c) => c >= 0, lt: (c) => c < 0, lte: (c) => c <= 0 }[base];
      test = (k, v) => k === vk && (vk === K_NUMBER || vk === K_STRING) && want(cmp(v));
      break;
    }
    case 'in': {
      const strs = new Set();
      const nums = new Set();
      let t = false;
      let f = false;
      for (const x of Array.isArray(val) ? val : []) {
        if (typeof x === 'string') strs.add(wellFormed(x));
        else if (typeof x === 'number') nums.add(x);
        else if (x === true) t = true;
        else if (x === false) f = true;
      }
      test = (k, v) => (k === K_STRING ? strs.has(v) : k === K_NUMBER ? nums.has(v) : k === K_BOOL ? (v ? t : f) : false);
      break;
    }
    case 'exists':
      test = (k) => k !== K_MISSING;
      break;
    default:
      return null;
  }
  return (attrs) => {
    let v = attrs != null && hasOwn.call(attrs, field) ? jsonValue(attrs[field]) : undefined;
    const k = kindOf(v);
    if (k === K_STRING) v = wellFormed(v);
    return test(k, v) !== negate;
  };
}

// compileAudience answers the definition's test of an attributes object,
// or null when some rule cannot be evaluated here.
function compileAudience(def) {
  if (def == null) return () => true;
  if (typeof def !== 'object' || !Array.isArray(def.rules) || def.rules.length === 0) return null;
  const tests = [];
  for (const r of def.rules) {
    const t = compileRule(r);
    if (!t) return null;
    tests.push(t);
  }
  const n = tests.length;
  if (def.logic === 'OR') {
    return (attrs) => {
      for (let i = 0; i < n; i++) if (tests[i](attrs)) return true;
      return false;
    };
  }
  if (def.logic != null && def.logic !== 'AND') return null;
  return (attrs) => {
    for (let i = 0; i < n; i++) if (!tests[i](attrs)) return false;
    return true;
  };
}

/**
 * sseParser answers a function that takes the text of a Server-Sent
 * Events stream piece by piece and calls onEvent(type, data, id) for
 * each event it completes.
 */
function sseParser(onEvent) {
  let buf = '';
  let type = '';
  let data = [];
  let id = '';
  return (chunk) => {
    buf += chunk;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buf);
      // A lone \r at the end may be the first half of \r\n.
      if (!m || (m[0] === '\r' && m.index === buf.length - 1)) return;
      const line = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      if (line === '') {
        if (data.length) onEvent(type || 'message', data.join('\n'), id);
        type = '';
        data = [];
        continue;
      }
      if (line[0] === ':') continue; // a comment: the heartbeat
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value[0] === ' ') value = value.slice(1);
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
  };
}

/**
 * compileCampaign prepares a ruleset's campaign entry for
 * evaluateCampaign. Its `local` is false for a campaign that only the
 * server can evaluate (round robin, rules on events).
 */
function compileCampaign(entry) {
  const variants = (Array.isArray(entry?.variants) ? entry.variants : []).slice().sort((a, b) => a.id - b.id);
  const audience = entry?.audience == null ? null : compileAudience(entry.audience);
  const ns = entry?.namespace && Array.isArray(entry.namespace.range) ? entry.namespace : null;
  const local = entry?.evaluation !== 'remote' && (entry?.assignmentType ?? 'weighted') === 'weighted'
    && (entry?.audience == null || audience !== null) && variants.length > 0;
  return {
    id: entry?.id,
    key: entry?.key,
    local,
    entry,
    variants,
    weights: variants.map((v) => Number(v.trafficAllocation)),
    seed: `${entry?.id}:`,
    ns: ns ? [String(ns.id), Number(ns.range[0]), Number(ns.range[1])] : null,
    audience,
  };
}

/**
 * evaluateCampaign answers a compiled local campaign for one visitor
 * ({userId, sessionId, attributes}) as the server's first assignment
 * would: {variant} (the ruleset's variant entry) or {reason}:
 * "not_in_namespace" (checked first) or "not_in_audience". A visitor
 * known only by a session has no profile, so a campaign with an
 * audience does not take them.
 */
function evaluateCampaign(c, visitor) {
  const userId = visitor?.userId ? String(visitor.userId) : '';
  const key = userId || (visitor?.sessionId ? String(visitor.sessionId) : '');
  if (c.ns && !inNamespace(c.ns[0], key, c.ns[1], c.ns[2])) return { reason: 'not_in_namespace' };
  if (c.audience && (!userId || !c.audience(visitor.attributes))) return { reason: 'not_in_audience' };
  let i = pickVariant(hashBucket(c.seed, key), c.weights);
  if (i < 0) i = 0;
  return { variant: c.variants[i] };
}

/**
 * createClient returns a client for one app. See README.md for the
 * options; `key` and `appId` are required.
 */
function createClient(options) {
  return new Client(options);
}

class Client {
  constructor(options = {}) {
    if (!options || typeof options.key !== 'string' || options.key === '') {
      throw invalidArgument('createClient: key is required');
    }
    const appId = Number(options.appId);
    if (!Number.isInteger(appId) || appId < 1) throw invalidArgument('createClient: appId must be a positive integer');
    const o = { ...defaults };
    for (const [k, v] of Object.entries(options)) if (v !== undefined) o[k] = v;
    o.maxBatchSize = Math.min(MAX_BATCH, Math.max(1, o.maxBatchSize | 0));
    if (!(o.flushTimeout > 0)) throw invalidArgument('createClient: flushTimeout must be a positive number of milliseconds (Infinity for no bound)');
    this.options = o;
    this.appId = appId;
    this.key = o.key;
    this.environment = o.environment;
    this.baseUrl = apiBase(o.baseUrl);
    this.storage = o.storage || defaultStorage();
    // What a memory storage holds is lost when the process ends.
    this._memoryOnly = memoryStores.has(this.storage);
    this._fetch = o.fetch || ((...a) => globalThis.fetch(...a));
    this._random = o.random || Math.random;
    this._prefix = `svc:${appId}:${o.environment}:`;
    this._variants = new Map(); // user key + campaign -> answer fetched in this session
    this._inflight = new Map(); // the same, for requests under way
    this._queue = [];
    this._closed = false;
    this._tracked = 0; // events tracked so far
    this._exitTried = -1; // _tracked when the process's exit last flushed
    this._lastError = null; // the last failure to send events
    this._failures = 0; // consecutive failed event sends
    this._notBefore = 0; // no interval send before this time (backoff, Retry-After)
    this._sending = null;
    this._eventSends = new Set(); // AbortControllers of event requests under way
    this._flushChain = Promise.resolve();
    this._writeChain = Promise.resolve();
    this.sessionId = typeof o.sessionId === 'string' && o.sessionId ? o.sessionId : null;
    this._ready = this._load();
    if (o.flushInterval > 0) {
      this._timer = setInterval(() => { this._tick(); }, o.flushInterval);
      // A Node process must be able to exit with a client open.
      this._timer?.unref?.();
    }
    this._listen();
    watchExit();
    if (o.evaluation !== undefined && o.evaluation !== 'local' && o.evaluation !== 'remote') {
      throw invalidArgument(`createClient: evaluation must be "local" or "remote"; got ${JSON.stringify(o.evaluation)}`);
    }
    this._local = o.evaluation === 'local';
    this._rs = null; // the compiled ruleset of local mode
    this._rsListeners = new Set();
    this._exposures = []; // exposures waiting to be sent
    this._exposed = new Set(); // user key + campaign already queued
    if (this._local) this._startLocal(o.bootstrap);
  }

  // --- local evaluation -----------------------------------------------------

  _startLocal(bootstrap) {
    let settle;
    // Settled once the first ruleset is in, or the first download failed
    // (getVariant then asks the server).
    this._rsFirst = new Promise((r) => { settle = r; });
    this._rsSettle = settle;
    if (bootstrap) {
      if (typeof bootstrap !== 'object' || !Array.isArray(bootstrap.campaigns)) {
        throw invalidArgument('createClient: bootstrap must be a ruleset ({version, campaigns, contentViews})');
      }
      this._setRuleset(bootstrap);
    }
    if (this.options.stream === false) {
      if (!bootstrap) this._refresh();
      return;
    }
    if (!bootstrap) this._refresh();
    this._follow();
  }

  /** ruleset is the ruleset local mode evaluates (null until it is in): what bootstrap takes. */
  get ruleset() {
    return this._rs ? this._rs.raw : null;
  }

  /**
   * ready answers once local mode holds a ruleset, or its first download
   * failed (getVariant then asks the server); at once in remote mode.
   */
  ready() {
    return this._local ? this._rsFirst : Promise.resolve();
  }

  /** onRulesetChange calls listener(ruleset) on each new ruleset; it answers the unsubscribe function. */
  onRulesetChange(listener) {
    this._rsListeners.add(listener);
    return () => { this._rsListeners.delete(listener); };
  }

  _setRuleset(raw) {
    const byId = new Map();
    const byKey = new Map();
    for (const e of raw.campaigns || []) {
      const c = compileCampaign(e);
      byId.set(c.id, c);
      if (c.key) byKey.set(c.key, c);
    }
    const content = new Map();
    // The variant route answers a block's id, name, status and items.
    for (const v of Array.isArray(raw.contentViews) ? raw.contentViews : []) {
      if (v && v.id != null) content.set(v.id, { id: v.id, name: v.name, status: v.status, items: v.items });
    }
    this._rs = { version: raw.version, raw, byId, byKey, content };
    this._rsSettle();
    for (const l of this._rsListeners) {
      try { l(raw); } catch (e) { this._report(e); }
    }
  }

  // _refresh downloads the ruleset unless the one held is current (ETag);
  // calls while one runs make it run once more after.
  _refresh() {
    if (this._closed) return Promise.resolve();
    if (this._refreshing) {
      this._refreshAgain = true;
      return this._refreshing;
    }
    this._refreshing = (async () => {
      try {
        do {
          this._refreshAgain = false;
          try {
            const headers = this._rs?.version ? { 'If-None-Match': `"${this._rs.version}"` } : undefined;
            const raw = await this._send('GET', `/apps-external/${this.appId}/ruleset`, undefined, false, Infinity, false, headers);
            if (!raw || !Array.isArray(raw.campaigns)) throw new ServiceError('INVALID_RULESET', 'the ruleset answer has no campaigns');
            this._setRuleset(raw);
          } catch (e) {
            if (e.status !== 304 && !this._closed) this._report(e);
          }
        } while (this._refreshAgain && !this._closed);
      } finally {
        // Cleared in the same step as the last check of _refreshAgain: a
        // call in between would otherwise be lost.
        this._refreshing = null;
        this._rsSettle();
      }
    })();
    return this._refreshing;
  }

  _onVersion(data, id) {
    let v = id;
    try { v = JSON.parse(data).version ?? id; } catch { /* the id says it */ }
    if (v) this._lastEventId = v;
    if (!this._rs || this._rs.version !== v) this._refresh();
  }

  _streamURL() {
    return `${this.baseUrl}/apps-external/${this.appId}/ruleset/stream`;
  }

  // _follow keeps the ruleset current through the stream: EventSource
  // where there is one (browsers), else fetch's streaming body (Node,
  // React Native with a streaming fetch), else polling. Every (re)connect
  // downloads the ruleset if it changed meanwhile.
  _follow() {
    const ES = globalThis.EventSource;
    if (typeof ES === 'function' && !this.options.fetch) {
      this._followEventSource(ES);
      return;
    }
    this._followFetch().catch((e) => this._report(e));
  }

  _followEventSource(ES) {
    let attempt = 0;
    const open = () => {
      if (this._closed) return;
      const es = new ES(`${this._streamURL()}?key=${encodeURIComponent(this.key)}`);
      this._es = es;
      es.addEventListener('open', () => {
        attempt = 0;
        this._refresh();
      });
      es.addEventListener('ruleset', (e) => this._onVersion(e.data, e.lastEventId));
      es.addEventListener('error', () => {
        // EventSource comes back by itself, unless the server refused the
        // stream (CLOSED): then it is opened anew after a backoff.
        if (es.readyState !== 2 || this._closed) return;
        attempt++;
        this._later(open, backoffDelay(attempt, this.options.retryBase, this.options.retryMax, this._random));
      });
    };
    open();
  }

  _later(fn, ms) {
    clearTimeout(this._streamTimer);
    this._streamTimer = setTimeout(fn, Math.min(ms, MAX_DELAY));
    // A service that is down must not keep a Node process alive.
    this._streamTimer?.unref?.();
  }

  async _followFetch() {
    let attempt = 0;
    while (!this._closed) {
      const ac = typeof AbortController === 'function' ? new AbortController() : null;
      this._streamAC = ac;
      let streamed = false;
      try {
        const headers = { Authorization: `Bearer ${this.key}`, Accept: 'text/event-stream' };
        if (this._lastEventId) headers['Last-Event-ID'] = this._lastEventId;
        const res = await this._fetch(this._streamURL(), { method: 'GET', headers, signal: ac?.signal });
        const reader = res.ok ? res.body?.getReader?.() : null;
        if (!res.ok) {
          const text = await res.text().catch(() => '');
          let env = {};
          try { env = JSON.parse(text).error || {}; } catch { /* not JSON */ }
          throw new ServiceError(env.code || `HTTP_${res.status}`, env.message || `GET ruleset/stream: HTTP ${res.status}`, { status: res.status, details: env.details });
        }
        if (!reader) {
          // No streaming body (React Native's own fetch): poll instead.
          ac?.abort();
          this._poll();
          return;
        }
        streamed = true;
        attempt = 0;
        this._refresh();
        const parse = sseParser((type, data, id) => { if (type === 'ruleset') this._onVersion(data, id); });
        const dec = new TextDecoder();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parse(dec.decode(value, { stream: true }));
        }
      } catch (e) {
        if (this._closed) return;
        if (e?.name !== 'AbortError') this._report(e instanceof ServiceError ? e : new ServiceError('NETWORK_ERROR', `GET ruleset/stream: ${e?.message || e}`, { cause: e }));
      }
      if (this._closed) return;
      attempt = streamed ? 1 : attempt + 1;
      await new Promise((r) => this._later(r, backoffDelay(attempt, this.options.retryBase, this.options.retryMax, this._random)));
    }
  }

  _poll() {
    const every = this.options.pollInterval > 0 ? this.options.pollInterval : 30000;
    this._pollTimer = setInterval(() => { this._refresh(); }, every);
    this._pollTimer?.unref?.();
  }

  _stopLocal() {
    clearTimeout(this._streamTimer);
    clearInterval(this._pollTimer);
    this._streamAC?.abort();
    this._es?.close?.();
    this._rsSettle?.();
  }

  // _localCampaign answers the compiled campaign when the ruleset holds it
  // and it can be evaluated here.
  _localCampaign(cid) {
    const rs = this._rs;
    if (!rs) return null;
    const c = typeof cid === 'number' ? rs.byId.get(cid) : rs.byKey.get(cid);
    return c && c.local ? c : null;
  }

  // _answerLocal evaluates c as the variant route would answer, and queues
  // the exposure of an assigned user.
  _answerLocal(c, userId, sessionId, attributes) {
    const ev = evaluateCampaign(c, { userId, sessionId, attributes });
    if (!ev.variant) return { campaignId: c.id, variantId: null, reason: ev.reason };
    const v = ev.variant;
    this._expose(c.id, v.id, userId, sessionId, attributes);
    return {
      campaignId: c.id,
      variantId: v.id,
      variantName: v.name,
      contentViewId: v.contentViewId,
      contentView: this._rs.content.get(v.contentViewId) ?? null,
      // The exposure records it, on its way in the next batch.
      impressionRecorded: false,
    };
  }

  _expose(campaignId, variantId, userId, sessionId, attributes) {
    const k = `${userId ? `u:${userId}` : `s:${sessionId}`}|${campaignId}|${variantId}`;
    if (this._exposed.has(k)) return;
    // A server's client sees users without end: the memory of what was
    // sent is bounded, and the service ignores a repeat anyway.
    if (this._exposed.size >= 100000) this._exposed.clear();
    this._exposed.add(k);
    const x = { campaignId, variantId };
    if (userId) x.userId = userId;
    else x.sessionId = sessionId;
    if (attributes) x.attributes = attributes;
    this._exposures.push(x);
    if (this._exposures.length >= this.options.maxBatchSize) this._sendExposures().catch((e) => this._report(e));
  }

  /** The number of exposures waiting to be sent (local mode). */
  get exposureQueueSize() {
    return this._exposures.length;
  }

  // _sendExposures sends the queued exposures in batches of at most
  // MAX_BATCH; a retryable failure keeps them for the next send.
  _sendExposures(keepalive = false, deadline = Infinity) {
    if (this._exposureSending) return this._exposureSending;
    const p = (async () => {
      while (this._exposures.length && Date.now() < deadline) {
        const batch = this._exposures.splice(0, Math.min(MAX_BATCH, this.options.maxBatchSize));
        let answer;
        try {
          answer = await this._send('POST', `/apps-external/${this.appId}/exposures`, { exposures: batch }, keepalive, deadline, true);
        } catch (err) {
          if (err.retryable) this._exposures.unshift(...batch);
          this._report(err);
          return;
        }
        for (const r of Array.isArray(answer?.data) ? answer.data : []) {
          if (r && r.recorded === false && r.reason) {
            this._report(new ServiceError('EXPOSURE_REFUSED', `exposure ${r.index} refused: ${r.reason}`,
              { status: 400, details: { ...r, exposure: batch[r.index] } }));
          }
        }
      }
    })().finally(() => { this._exposureSending = null; });
    this._exposureSending = p;
    return p;
  }

  /**
   * getVariantSync answers like getVariant, without waiting, when local
   * mode can: the ruleset is in, and holds the campaign as a local one.
   * It answers null otherwise (remote mode, a remote campaign, no
   * ruleset yet, no user or session known yet).
   */
  getVariantSync(campaign, opts = {}) {
    const cid = campaignRef(campaign);
    const c = this._local ? this._localCampaign(cid) : null;
    if (!c) return null;
    opts = opts || {};
    const userId = opts.userId == null ? undefined : String(opts.userId);
    const sessionId = opts.sessionId == null ? this.sessionId : String(opts.sessionId);
    if (!userId && !sessionId) return null;
    return this._answerLocal(c, userId, sessionId, opts.attributes);
  }

  // --- storage ----------------------------------------------------------

  _report(err) {
    try { this.options.onError?.(err); } catch { /* the app's handler must not break the SDK */ }
  }

  async _get(name) {
    try {
      const v = await this.storage.getItem(this._prefix + name);
      return v == null ? null : JSON.parse(v);
    } catch (e) {
      this._report(new ServiceError('STORAGE_ERROR', `storage read of ${name} failed`, { cause: e }));
      return null;
    }
  }

  // Writes are chained so that an older copy never overwrites a newer one.
  _set(name, value) {
    this._writeChain = this._writeChain.then(async () => {
      try {
        if (value === undefined) await this.storage.removeItem(this._prefix + name);
        else await this.storage.setItem(this._prefix + name, JSON.stringify(value));
      } catch (e) {
        this._report(new ServiceError('STORAGE_ERROR', `storage write of ${name} failed`, { cause: e }));
      }
    });
    return this._writeChain;
  }

  async _load() {
    if (!this.sessionId) {
      const s = await this._get('session');
      this.sessionId = typeof s === 'string' && s ? s : randomId();
      if (s !== this.sessionId) await this._set('session', this.sessionId);
    }
    const stored = await this._get('queue');
    if (Array.isArray(stored) && stored.length) {
      // Events of an earlier run go first; events tracked since start-up
      // follow, without duplicates.
      const seen = new Set(this._queue.map((e) => e.logId));
      this._queue = stored.filter((e) => e && typeof e.eventId === 'string' && !seen.has(e.logId)).concat(this._queue);
      // This client sends them now: a closed client that left them there
      // no longer answers for them at exit.
      for (const c of pendingAtExit) {
        if (c !== this && c._closed && c.storage === this.storage && c._prefix === this._prefix) pendingAtExit.delete(c);
      }
      this._bound();
      await this._saveQueue();
    }
  }

  _saveQueue() {
    this._watchExit();
    return this._set('queue', this._queue.length ? this._queue : undefined);
  }

  // _watchExit keeps the client in pendingAtExit while it holds events
  // that the process's exit would leave unsent: those of an open client,
  // and those of a closed one whose storage ends with the process.
  _watchExit() {
    if (this._queue.length && (!this._closed || this._memoryOnly)) pendingAtExit.add(this);
    else pendingAtExit.delete(this);
  }

  // --- HTTP ---------------------------------------------------------------

  /**
   * _request sends one API request and answers its JSON. It retries
   * network errors, 5xx and 429 (429 and 503 after Retry-After) up to `retries` times
   * with backoff; other 4xx answers fail at once.
   */
  async _request(method, path, body, { retries = 2, keepalive = false } = {}) {
    for (let attempt = 0; ; attempt++) {
      if (this._closed && !keepalive) throw new ServiceError('CLIENT_CLOSED', 'the client is closed');
      let err;
      try {
        return await this._send(method, path, body, keepalive);
      } catch (e) {
        err = e instanceof ServiceError ? e : new ServiceError('NETWORK_ERROR', String(e?.message || e), { cause: e });
      }
      // A long Retry-After is not waited out by a caller who wants an
      // answer now; the stored answer, if any, serves instead.
      if (!err.retryable || attempt >= retries || err.retryAfter > this.options.retryMax) throw err;
      await sleep(this._retryWait(err, attempt + 1));
    }
  }

  _retryWait(err, attempt) {
    const o = this.options;
    const backoff = backoffDelay(attempt, o.retryBase, o.retryMax, this._random);
    return err.retryAfter !== undefined ? Math.max(err.retryAfter, backoff / 2) : backoff;
  }

  // _send makes one request; deadline (a time in ms), when given, cuts
  // the request's timeout short. An event send (events) can also be cut
  // by close().
  async _send(method, path, body, keepalive, deadline = Infinity, events = false, extraHeaders = undefined) {
    const headers = { Authorization: `Bearer ${this.key}`, ...extraHeaders };
    const init = { method, headers };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    if (keepalive) init.keepalive = true;
    let timer;
    let ac;
    const timeout = Math.max(0, Math.min(this.options.timeout > 0 ? this.options.timeout : Infinity, deadline - Date.now()));
    if (typeof AbortController === 'function' && (timeout <= MAX_DELAY || events)) {
      ac = new AbortController();
      init.signal = ac.signal;
      if (timeout <= MAX_DELAY) timer = setTimeout(() => ac.abort(), timeout);
      if (events) this._eventSends.add(ac);
    }
    let res;
    try {
      res = await this._fetch(this.baseUrl + path, init);
    } catch (e) {
      if (e?.name === 'AbortError') {
        // Retryable either way: the events stay queued.
        const why = ac?.cutByClose ? 'closed before an answer came' : `no answer within ${timeout} ms`;
        throw new ServiceError('TIMEOUT', `${method} ${path}: ${why}`, { cause: e });
      }
      throw new ServiceError('NETWORK_ERROR', `${method} ${path}: ${e?.message || e}`, { cause: e });
    } finally {
      clearTimeout(timer);
      this._eventSends.delete(ac);
    }
    let data = null;
    const text = await res.text().catch(() => '');
    try { data = text ? JSON.parse(text) : null; } catch { /* not JSON: handled below */ }
    if (res.ok) return data;
    const env = data && data.error ? data.error : {};
    // 429 (rate limit) and 503 (the database did not answer in time) say
    // when to come back.
    const retryAfter = res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers?.get?.('Retry-After')) : undefined;
    throw new ServiceError(env.code || `HTTP_${res.status}`, env.message || `${method} ${path}: HTTP ${res.status}`,
      { status: res.status, details: env.details, retryAfter });
  }

  // --- variants -----------------------------------------------------------

  async _user(opts) {
    await this._ready;
    const userId = opts.userId == null ? undefined : String(opts.userId);
    const sessionId = opts.sessionId == null ? this.sessionId : String(opts.sessionId);
    return { userId, sessionId, userKey: userId ? `u:${userId}` : `s:${sessionId}` };
  }

  /**
   * getVariant answers the user's variant in a campaign, named by its id
   * or by its key. A repeat call for
   * the same user and campaign in this session answers from memory without
   * a request; a failed request answers the stored variant when there is
   * one, and rejects with a ServiceError when there is none.
   */
  async getVariant(campaign, opts = {}) {
    const cid = campaignRef(campaign);
    opts = opts || {};
    const { userId, sessionId, userKey } = await this._user(opts);
    if (this._local) {
      // Local campaigns answer without the network once the ruleset is
      // in; remote ones, and any the ruleset lacks, ask the server.
      if (!this._rs) await this._rsFirst;
      const c = this._localCampaign(cid);
      if (c) return this._answerLocal(c, userId, sessionId, opts.attributes);
    }
    // A key is remembered apart from ids ("k:" cannot start an id), so the
    // same campaign asked for both ways costs one request more, never a
    // wrong answer.
    const k = typeof cid === 'number' ? `${userKey}|${cid}` : `${userKey}|k:${cid}`;
    if (this._variants.has(k)) return this._variants.get(k);
    if (this._inflight.has(k)) return this._inflight.get(k);
    const p = (async () => {
      const body = { userId, sessionId };
      if (opts.attributes) body.attributes = opts.attributes;
      try {
        const answer = await this._request('POST', `/apps-external/${this.appId}/campaigns/${cid}/variant`, body);
        this._variants.set(k, answer);
        await this._set(`variant:${k}`, answer);
        return answer;
      } catch (err) {
        const stored = err.code === 'CLIENT_CLOSED' ? null : await this._get(`variant:${k}`);
        if (stored) {
          this._report(err);
          return stored;
        }
        throw err;
      } finally {
        this._inflight.delete(k);
      }
    })();
    this._inflight.set(k, p);
    return p;
  }

  /**
   * getVariants assigns the user in every active campaign of the app and
   * answers {data: [...]}; each answer is kept as getVariant keeps it. A
   * failed request answers the last stored list for the user.
   */
  async getVariants(opts = {}) {
    const { userId, sessionId, userKey } = await this._user(opts || {});
    const body = { userId, sessionId };
    if (opts && opts.attributes) body.attributes = opts.attributes;
    try {
      const answer = await this._request('POST', `/apps-external/${this.appId}/variants`, body);
      for (const v of answer?.data || []) {
        const k = `${userKey}|${v.campaignId}`;
        this._variants.set(k, v);
        this._set(`variant:${k}`, v);
      }
      await this._set(`variants:${userKey}`, answer);
      return answer;
    } catch (err) {
      const stored = err.code === 'CLIENT_CLOSED' ? null : await this._get(`variants:${userKey}`);
      if (stored) {
        this._report(err);
        return stored;
      }
      throw err;
    }
  }

  /**
   * identify merges attributes into the user's profile, and links the
   * session this client keeps to the user: the visitor's assignments made
   * before sign-in become the user's, with no second impression. A session
   * linked to another user rejects with SESSION_LINKED (409).
   */
  async identify(userId, attributes = {}) {
    if (userId == null || userId === '') throw invalidArgument('identify: userId is required');
    await this._ready;
    return this._request('POST', `/apps-external/${this.appId}/identify`, { userId: String(userId), sessionId: this.sessionId, attributes });
  }

  /** getContent answers a published content block. */
  async getContent(contentViewId) {
    const id = Number(contentViewId);
    if (!Number.isInteger(id) || id < 1) throw invalidArgument('getContent: contentViewId must be a positive integer');
    try {
      const block = await this._request('GET', `/apps-external/${this.appId}/content/${id}`);
      this._set(`content:${id}`, block);
      return block;
    } catch (err) {
      const stored = err.retryable ? await this._get(`content:${id}`) : null;
      if (stored) {
        this._report(err);
        return stored;
      }
      throw err;
    }
  }

  /**
   * submitForm submits a form block's data. It is not retried after a
   * network error, which may have hidden a stored submission; a 429 is
   * retried after Retry-After, since nothing was stored.
   */
  async submitForm(contentViewId, data, opts = {}) {
    const id = Number(contentViewId);
    if (!Number.isInteger(id) || id < 1) throw invalidArgument('submitForm: contentViewId must be a positive integer');
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw invalidArgument('submitForm: data must be an object');
    const { userId, sessionId } = await this._user(opts || {});
    const body = { contentViewId: id, data, userId, sessionId, environment: this.environment };
    for (let attempt = 1; ; attempt++) {
      try {
        return await this._request('POST', `/apps-external/${this.appId}/submit-form`, body, { retries: 0 });
      } catch (err) {
        if (err.status !== 429 || attempt > this.options.maxRetries) throw err;
        await sleep(this._retryWait(err, attempt));
      }
    }
  }

  // --- events -------------------------------------------------------------

  /**
   * track queues an event and answers {logId} once it is queued (and
   * stored). It is sent in a batch on the interval, on flush(), when the
   * page is hidden, and in Node before the process exits.
   */
  async track(eventId, opts = {}) {
    if (this._closed) throw new ServiceError('CLIENT_CLOSED', 'the client is closed');
    if (typeof eventId !== 'string' || eventId.trim() === '') throw invalidArgument('track: eventId must be a non-empty string');
    opts = opts || {};
    if (opts.metadata != null && (typeof opts.metadata !== 'object' || Array.isArray(opts.metadata))) {
      throw invalidArgument('track: metadata must be an object');
    }
    const { userId, sessionId } = await this._user(opts);
    const ev = { eventId, logId: opts.logId ? String(opts.logId) : randomId() };
    if (userId) ev.userId = userId;
    if (sessionId) ev.sessionId = sessionId;
    if (opts.metadata != null) ev.metadata = opts.metadata;
    this._queue.push(ev);
    this._tracked++;
    this._bound();
    await this._saveQueue();
    if (this._queue.length >= this.options.maxBatchSize) this._tick();
    return { logId: ev.logId };
  }

  /** The number of events waiting to be sent. */
  get queueSize() {
    return this._queue.length;
  }

  // _bound drops the oldest events beyond maxQueueSize and says so.
  _bound() {
    const over = this._queue.length - this.options.maxQueueSize;
    if (over > 0) this._drop(this._queue.splice(0, over), 'queue_full');
  }

  _drop(events, reason, error) {
    if (!events.length) return;
    try { this.options.onDrop?.(events, reason, error); } catch { /* the app's handler must not break the SDK */ }
    this._report(error || new ServiceError('EVENTS_DROPPED', `${events.length} event(s) dropped: ${reason}`,
      { details: { reason, count: events.length } }));
  }

  // _tick is the interval's send: it skips while a send runs or while a
  // backoff or Retry-After is pending.
  _tick() {
    if (!this._closed && this._exposures.length && Date.now() >= this._notBefore) this._sendExposures().catch((e) => this._report(e));
    if (this._closed || this._sending || !this._queue.length || Date.now() < this._notBefore) return;
    this._sendQueued({ retries: 0 }).catch((e) => this._report(e));
  }

  /**
   * flush sends every queued event now, retrying failures with backoff for
   * at most flushTimeout ms, and answers {sent, dropped, pending}. It never
   * rejects: what could not be sent stays queued (and stored), and the
   * error goes to onError.
   */
  flush() {
    const deadline = Date.now() + this.options.flushTimeout;
    this._flushChain = this._flushChain.then(async () => {
      // An interval send under way finishes first.
      if (!(await this._sendingDone(deadline))) return this._result();
      const out = await this._sendQueued({ retries: this.options.maxRetries, force: true, deadline });
      if (this._exposures.length || this._exposureSending) {
        await this._exposureSending;
        await this._sendExposures(false, deadline);
      }
      return out;
    }).catch((e) => {
      this._report(e);
      return this._result();
    });
    return this._flushChain;
  }

  _result(sent = 0, dropped = 0) {
    return { sent, dropped, pending: this._queue.length };
  }

  // _sendingDone waits for the send under way, if any, until deadline; it
  // answers whether the send ended.
  async _sendingDone(deadline) {
    while (this._sending) {
      const left = deadline - Date.now();
      if (left > MAX_DELAY) {
        await this._sending.catch(() => {});
        continue;
      }
      let timer;
      const late = new Promise((r) => { timer = setTimeout(r, Math.max(0, left), 'late'); });
      const r = await Promise.race([this._sending.catch(() => {}), late]);
      clearTimeout(timer);
      if (r === 'late') return false;
    }
    return true;
  }

  _sendQueued(opts) {
    const p = this._sendAll(opts).finally(() => { if (this._sending === p) this._sending = null; });
    this._sending = p;
    return p;
  }

  // _sendAll sends the queue in batches. A retryable failure is retried
  // `retries` times when forced, never past deadline.
  async _sendAll({ retries, force = false, keepalive = false, deadline = Infinity }) {
    await this._ready;
    const out = this._result();
    let attempt = 0;
    while (this._queue.length && Date.now() < deadline) {
      const batch = this._nextBatch(keepalive);
      try {
        const r = await this._sendBatch(batch, keepalive, deadline);
        out.sent += r.sent;
        out.dropped += r.dropped;
        this._failures = 0;
        this._notBefore = 0;
        this._lastError = null;
        attempt = 0;
      } catch (err) {
        if (!err.retryable) {
          // The service refused the whole batch (a bad key, say): sending it
          // again would be refused again.
          this._remove(batch);
          out.dropped += batch.length;
          this._drop(batch, 'rejected', err);
          continue;
        }
        this._lastError = err;
        this._failures++;
        const wait = this._retryWait(err, this._failures);
        this._notBefore = Date.now() + wait;
        if (!force || attempt >= retries || this._closed || this._notBefore >= deadline) {
          this._report(err);
          break;
        }
        attempt++;
        await sleep(wait);
      }
    }
    out.pending = this._queue.length;
    return out;
  }

  // _nextBatch takes the oldest events; a keepalive request (page hide)
  // must stay under the browsers' 64 KiB limit on such bodies.
  _nextBatch(keepalive) {
    const batch = this._queue.slice(0, this.options.maxBatchSize);
    if (!keepalive) return batch;
    let size = 20;
    for (let i = 0; i < batch.length; i++) {
      size += JSON.stringify(batch[i]).length + 1;
      if (size > 60000) return batch.slice(0, Math.max(1, i));
    }
    return batch;
  }

  async _sendBatch(batch, keepalive, deadline) {
    const answer = await this._send('POST', `/apps/${this.appId}/events/batch`, { events: batch }, keepalive, deadline, true);
    const results = Array.isArray(answer?.data) ? answer.data : [];
    const rejected = [];
    let sent = 0;
    batch.forEach((ev, i) => {
      const r = results[i];
      if (r && r.success === false) rejected.push([ev, r.error]);
      else sent++;
    });
    this._remove(batch);
    for (const [ev, e] of rejected) {
      this._drop([ev], 'rejected', new ServiceError(e?.code || 'INVALID_REQUEST', e?.message || 'event refused',
        { status: 400, details: e?.details }));
    }
    return { sent, dropped: rejected.length };
  }

  _remove(batch) {
    const gone = new Set(batch.map((e) => e.logId));
    this._queue = this._queue.filter((e) => !gone.has(e.logId));
    this._saveQueue();
  }

  // Browsers: send what is queued when the page is hidden, with keepalive
  // so the request outlives the page. What does not make it stays stored
  // and goes with the next page load; its logIds keep it from counting
  // twice.
  _listen() {
    const doc = globalThis.document;
    const win = globalThis.window;
    if (!doc || typeof doc.addEventListener !== 'function') return;
    this._onHide = () => {
      if (doc.visibilityState && doc.visibilityState !== 'hidden') return;
      if (!this._queue.length || this._sending) return;
      this._sendQueued({ retries: 0, keepalive: true }).catch((e) => this._report(e));
    };
    doc.addEventListener('visibilitychange', this._onHide);
    win?.addEventListener?.('pagehide', this._onHide);
  }

  /**
   * close stops the interval and the page listeners and makes one last
   * attempt, within flushTimeout, to send what is queued; what fails stays
   * in the storage for the next client. It answers {sent, dropped,
   * pending} and never rejects.
   */
  close() {
    if (this._closed) return this._closing;
    const deadline = Date.now() + this.options.flushTimeout;
    clearInterval(this._timer);
    const doc = globalThis.document;
    if (this._onHide) {
      doc?.removeEventListener?.('visibilitychange', this._onHide);
      globalThis.window?.removeEventListener?.('pagehide', this._onHide);
    }
    this._closed = true;
    this._stopLocal();
    this._closing = (async () => {
      await this._ready;
      let out = this._result();
      if (!(await this._sendingDone(deadline))) {
        // A send that outlasts close() would hold a Node process open:
        // it is cut, and its events stay stored.
        for (const ac of this._eventSends) {
          ac.cutByClose = true;
          ac.abort();
        }
        await this._sending?.catch(() => {});
      } else if (this._queue.length) {
        out = await this._sendAll({ retries: 0, keepalive: true, deadline });
      }
      if (this._exposures.length || this._exposureSending) {
        await this._exposureSending?.catch(() => {});
        await this._sendExposures(true, deadline).catch(() => {});
      }
      await this._writeChain;
      return { ...out, pending: this._queue.length };
    })().catch((e) => {
      this._report(e);
      return this._result();
    }).finally(() => this._watchExit());
    return this._closing;
  }

  /**
   * renderContent renders a block (a content view, a variant answer or an
   * items array) into element; forms submit through this client.
   */
  renderContent(block, element, options = {}) {
    return renderContent(block, element, { ...options, client: this });
  }
}

// --- rendering (browsers) -----------------------------------------------

// Style properties a block may set, and values that cannot fetch or run
// anything.
const styleProps = new Set(['color', 'backgroundColor', 'fontSize', 'fontWeight', 'fontStyle', 'fontFamily',
  'textAlign', 'textDecoration', 'lineHeight', 'letterSpacing', 'margin', 'marginTop', 'marginBottom',
  'padding', 'borderRadius', 'border', 'width', 'maxWidth', 'display']);
const unitless = new Set(['fontWeight', 'lineHeight']);

function applyStyles(el, styles) {
  if (!styles || typeof styles !== 'object' || !el.style) return;
  for (const [k, v] of Object.entries(styles)) {
    if (!styleProps.has(k)) continue;
    let val = typeof v === 'number' && !unitless.has(k) ? `${v}px` : String(v);
    if (/url\s*\(|expression\s*\(|[<>{};\\]/i.test(val)) continue;
    el.style[k] = val;
  }
}

// safeURL allows what the service allows: http(s) URLs and paths.
function safeURL(u) {
  if (typeof u !== 'string') return null;
  const t = u.trim();
  if (/^https?:\/\//i.test(t) || (t.startsWith('/') && !t.startsWith('//'))) return t;
  return null;
}

const inputTypes = { text: 'text', email: 'email', number: 'number' };

/**
 * renderContent renders a content block into a DOM element with
 * createElement, textContent and attribute setters only, never innerHTML,
 * so service data cannot inject markup or script. It replaces element's
 * children and answers the element. options: client (for forms), userId,
 * sessionId, onSubmit(answer), onButtonClick(item, event), document.
 */
function renderContent(block, element, options = {}) {
  if (!element || typeof element.appendChild !== 'function') throw invalidArgument('renderContent: element must be a DOM element');
  const doc = options.document || element.ownerDocument || globalThis.document;
  let view = block;
  if (block && block.contentView) view = { ...block.contentView, id: block.contentView.id ?? block.contentViewId };
  const items = Array.isArray(view) ? view : Array.isArray(view?.items) ? view.items : [];
  const contentViewId = Array.isArray(view) ? options.contentViewId : view?.id;
  while (element.firstChild) element.removeChild(element.firstChild);
  const el = (tag, cls, text) => {
    const n = doc.createElement(tag);
    if (cls) n.setAttribute('class', cls);
    if (text != null) n.textContent = String(text);
    return n;
  };
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    let node = null;
    switch (item.type) {
      case 'heading':
        node = el('h2', 'svc-heading', item.content);
        break;
      case 'text':
        node = el('p', 'svc-text', item.content);
        break;
      case 'image': {
        const src = safeURL(item.url);
        if (!src) break;
        node = el('img', 'svc-image');
        node.setAttribute('src', src);
        node.setAttribute('alt', item.alt == null ? '' : String(item.alt));
        break;
      }
      case 'button': {
        const href = safeURL(item.url);
        node = el(href ? 'a' : 'button', 'svc-button', item.label);
        if (href) node.setAttribute('href', href);
        else node.setAttribute('type', 'button');
        if (options.onButtonClick) node.addEventListener('click', (e) => options.onButtonClick(item, e));
        break;
      }
      case 'form':
        node = renderForm(doc, el, item, contentViewId, options);
        break;
      default:
        continue; // a type this SDK version does not know
    }
    if (!node) continue;
    node.setAttribute('data-item-type', item.type);
    applyStyles(node, item.styles);
    element.appendChild(node);
  }
  return element;
}

function renderForm(doc, el, item, contentViewId, options) {
  const form = el('form', 'svc-form');
  form.setAttribute('novalidate', '');
  const inputs = [];
  for (const f of Array.isArray(item.fields) ? item.fields : []) {
    if (!f || typeof f.name !== 'string') continue;
    const row = el('div', 'svc-field');
    const id = `svc-${contentViewId}-${f.name}`.replace(/[^A-Za-z0-9_-]/g, '_');
    const label = el('label', null, f.label || f.name);
    label.setAttribute('for', id);
    let input;
    if (f.type === 'textarea') input = el('textarea');
    else if (f.type === 'select') {
      input = el('select');
      if (!f.required) input.appendChild(el('option', null, ''));
      for (const o of Array.isArray(f.options) ? f.options : []) {
        const opt = el('option', null, o);
        opt.setAttribute('value', String(o));
        input.appendChild(opt);
      }
    } else {
      input = el('input');
      input.setAttribute('type', f.type === 'checkbox' ? 'checkbox' : inputTypes[f.type] || 'text');
    }
    input.setAttribute('id', id);
    input.setAttribute('name', f.name);
    if (f.required) input.setAttribute('required', '');
    if (Number.isInteger(f.minLength)) input.setAttribute('minlength', String(f.minLength));
    if (Number.isInteger(f.maxLength)) input.setAttribute('maxlength', String(f.maxLength));
    const error = el('span', 'svc-field-error');
    if (f.type === 'checkbox') { row.appendChild(input); row.appendChild(label); } else { row.appendChild(label); row.appendChild(input); }
    row.appendChild(error);
    form.appendChild(row);
    inputs.push({ f, input, error });
  }
  const submit = el('button', 'svc-submit', item.submitLabel || 'Submit');
  submit.setAttribute('type', 'submit');
  const status = el('p', 'svc-form-status');
  form.appendChild(submit);
  form.appendChild(status);
  form.addEventListener('submit', async (e) => {
    e?.preventDefault?.();
    const client = options.client;
    if (!client) {
      status.textContent = 'This form cannot be sent here.';
      return;
    }
    const data = {};
    for (const { f, input, error } of inputs) {
      error.textContent = '';
      if (f.type === 'checkbox') data[f.name] = !!input.checked;
      else if (input.value !== '' && input.value != null) data[f.name] = f.type === 'number' ? Number(input.value) : input.value;
    }
    submit.setAttribute('disabled', '');
    status.textContent = '';
    try {
      const answer = await client.submitForm(contentViewId, data, { userId: options.userId, sessionId: options.sessionId });
      const done = el('p', 'svc-form-success', item.successMessage || 'Thank you!');
      form.parentNode?.replaceChild(done, form);
      options.onSubmit?.(answer);
    } catch (err) {
      const fields = err?.details?.fields || {};
      for (const { f, error } of inputs) {
        const why = fields[`data.${f.name}`];
        if (why) error.textContent = String(why);
      }
      status.textContent = err?.message || 'Could not send the form.';
      submit.removeAttribute('disabled');
    }
  });
  return form;
}

module.exports = { VERSION, MAX_BATCH, ServiceError, memoryStorage, backoffDelay, hashBucket, inNamespace, compileCampaign, evaluateCampaign, createClient, renderContent };
