// Compiled by `tsc --noEmit` only: the README's calls must type-check
// against the shipped declarations.
import { createClient, renderContent, memoryStorage, ServiceError, type VariantAnswer, type QueuedEvent } from '../src/index.js';

async function example(el: HTMLElement): Promise<void> {
  const client = createClient({
    key: 'sk_c_x', appId: 1, environment: 'production', baseUrl: 'https://api.example/v1', storage: memoryStorage(),
    onError: (e: ServiceError) => console.warn(e.code, e.status, e.details),
    onDrop: (events: QueuedEvent[], reason) => console.warn(reason, events.length),
  });
  const v: VariantAnswer = await client.getVariant(1, { userId: 'u1', sessionId: 's1', attributes: { plan: 'pro' } });
  if (v.variantId !== null) {
    const name: string = v.variantName;
    client.renderContent(v, el);
    renderContent(v.contentView, el, { client, userId: 'u1' });
    void name;
  } else {
    const reason: string = v.reason;
    void reason;
  }
  const all = await client.getVariants({ userId: 'u1', attributes: {} });
  all.data.forEach((a) => a.contentViewId);
  await client.identify('u1', { plan: 'pro' });
  const { logId } = await client.track('purchase', { userId: 'u1', sessionId: 's1', metadata: { amount: 5 }, logId: 'order-1' });
  const block = await client.getContent(3);
  const sub = await client.submitForm(block.id, { email: 'a@example.com' }, { userId: 'u1', sessionId: 's1' });
  const f = await client.flush();
  const n: number = f.sent + f.dropped + f.pending + sub.formSubmissionId + logId.length;
  void n;
  try {
    await client.getVariant(99);
  } catch (e) {
    if (e instanceof ServiceError && e.retryable) console.log(e.code, e.message, e.status);
  }
  await client.close();
}
void example;
