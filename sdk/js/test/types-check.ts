// Compiled by `tsc --noEmit -p tsconfig.json` only, with the DOM lib: the
// README's calls must type-check against the shipped declarations, and
// DOM elements, documents, events and fetch must fit where the SDK takes
// them.
import {
  createClient, renderContent, memoryStorage, ServiceError,
  type VariantAnswer, type QueuedEvent, type Profile, type ContentBlock, type VariantList,
  type FlushResult, type TrackResult, type FormSubmission, type Ruleset,
  compileCampaign, evaluateCampaign, hashBucket, inNamespace,
} from '../src/index.js';

async function example(el: HTMLElement): Promise<void> {
  const client = createClient({
    key: 'sk_c_x', appId: 1, environment: 'production', baseUrl: 'https://api.example', storage: memoryStorage(),
    flushTimeout: 3000,
    fetch,
    onError: (e: ServiceError) => console.warn(e.code, e.status, e.details),
    onDrop: (events: QueuedEvent[], reason) => console.warn(reason, events.length),
  });
  createClient({ key: 'k', appId: 1, fetch: (url, init) => fetch(url, init) });
  const base: string = client.baseUrl;
  const v: VariantAnswer = await client.getVariant(1, { userId: 'u1', sessionId: 's1', attributes: { plan: 'pro' } });
  const byKey: VariantAnswer = await client.getVariant('hero-test', { userId: 'u1' });
  void byKey;
  if (v.variantId !== null) {
    const name: string = v.variantName;
    const recorded: boolean = v.impressionRecorded;
    client.renderContent(v, el);
    const div: HTMLDivElement = renderContent(v.contentView, document.createElement('div'), {
      client, userId: 'u1', document,
      onButtonClick: (item, e) => console.log(item.type, e.clientX),
      onSubmit: (answer) => console.log(answer.formSubmissionId),
    });
    void name; void recorded; void div;
  } else {
    const reason: string = v.reason;
    void reason;
  }
  const all: VariantList = await client.getVariants({ userId: 'u1', attributes: {} });
  all.data.forEach((a) => a.contentViewId);
  const profile: Profile = await client.identify('u1', { plan: 'pro' });
  const seen: string = profile.firstSeen + profile.lastSeen + profile.userId;
  const plan: unknown = profile.attributes.plan;
  const { logId }: TrackResult = await client.track('purchase', { userId: 'u1', sessionId: 's1', metadata: { amount: 5 }, logId: 'order-1' });
  const block: ContentBlock = await client.getContent(3);
  const published: string | null = block.publishedAt;
  const status: 'draft' | 'published' | 'archived' = block.status;
  const sub: FormSubmission = await client.submitForm(block.id, { email: 'a@example.com' }, { userId: 'u1', sessionId: 's1' });
  const f: FlushResult = await client.flush();
  const n: number = f.sent + f.dropped + f.pending + sub.formSubmissionId + logId.length + block.appId;
  void n; void base; void seen; void plan; void published; void status;
  try {
    await client.getVariant(99);
  } catch (e) {
    if (e instanceof ServiceError && e.retryable) console.log(e.code, e.message, e.status);
  }
  const closed: FlushResult = await client.close();
  void closed.pending;
}
void example;

async function localMode(rs: Ruleset): Promise<void> {
  const client = createClient({ key: 'k', appId: 1, evaluation: 'local', bootstrap: rs, stream: true, pollInterval: 30000 });
  await client.ready();
  const now: VariantAnswer | null = client.getVariantSync('hero-test', { userId: 'u1', attributes: { plan: 'pro' } });
  void now;
  const stop: () => void = client.onRulesetChange((r: Ruleset) => console.log(r.version, r.campaigns.length));
  stop();
  const held: Ruleset | null = client.ruleset;
  const c = compileCampaign(rs.campaigns[0]);
  const ev = evaluateCampaign(c, { userId: 'u', attributes: { age: 3 } });
  const vid: number | undefined = ev.variant?.id;
  const n: number = hashBucket('1:', 'u') + client.exposureQueueSize;
  const inside: boolean = inNamespace('ns', 'u', 0, 0.5);
  void held; void vid; void n; void inside;
}
void localMode;
