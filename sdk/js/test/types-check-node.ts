// Compiled by `tsc --noEmit -p tsconfig.node.json` only: a Node project
// without the DOM lib ("lib": ["es2022"], no @types) compiles against the
// shipped declarations, answers typed.
import { createClient, memoryStorage, renderContent, ServiceError, type FetchLike, type Profile, type FlushResult } from '../src/index.js';

// A transport of the app's own, as a Node app without the DOM types writes one.
const transport: FetchLike = async (url, init) => ({
  ok: true, status: 200, headers: { get: () => null },
  text: async () => JSON.stringify({ url, method: init.method, body: init.body ?? null }),
});

export async function main(): Promise<number> {
  const client = createClient({ key: 'sk_c_x', appId: 1, baseUrl: 'http://localhost:8080', storage: memoryStorage(), fetch: transport, flushTimeout: 2000 });
  const profile: Profile = await client.identify('u1', { plan: 'pro' });
  const v = await client.getVariant(1, { userId: profile.userId });
  const name: string = v.variantId === null ? v.reason : v.variantName;
  await client.track('signup', { userId: 'u1', metadata: { name } });
  const f: FlushResult = await client.flush();
  const c: FlushResult = await client.close();
  // renderContent takes anything shaped like a DOM element.
  const nodes: unknown[] = [];
  const target = {
    firstChild: null,
    appendChild: (n: unknown) => nodes.push(n),
    removeChild: (n: unknown) => n,
    ownerDocument: { createElement: (tag: string) => ({ tag }) },
  };
  renderContent([], target);
  try {
    await client.getContent(1);
  } catch (e) {
    if (e instanceof ServiceError) return e.status;
  }
  return f.sent + c.pending + nodes.length;
}
