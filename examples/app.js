// The example page's script. Settings come from the form, or from the
// query string (?baseUrl=&key=&appId=&campaignId=&userId=&goal=), which
// also fills the form; ?autoclick=1 presses the goal button once the
// variant is shown (the browser test uses it).
import { createClient } from '../sdk/js/src/index.js';

const $ = (id) => document.getElementById(id);
const log = (line) => { $('log').textContent += line + '\n'; };
const form = $('config');
const params = new URLSearchParams(location.search);
for (const el of form.elements) if (el.name && params.has(el.name)) el.value = params.get(el.name);

let client;

async function show() {
  const cfg = Object.fromEntries(new FormData(form));
  await client?.close();
  client = createClient({
    key: cfg.key, appId: Number(cfg.appId), baseUrl: cfg.baseUrl, environment: 'example',
    onError: (e) => log(`error: ${e.code} ${e.message}`),
    onDrop: (events, reason) => log(`dropped ${events.length} event(s): ${reason}`),
  });
  document.body.dataset.state = 'loading';
  try {
    const v = await client.getVariant(Number(cfg.campaignId), { userId: cfg.userId });
    if (v.variantId === null) {
      $('variant-name').textContent = `none (${v.reason})`;
    } else {
      $('variant-name').textContent = v.variantName;
      client.renderContent(v, $('variant'), { userId: cfg.userId });
    }
    log(`variant: ${v.variantId === null ? 'none' : v.variantName}`);
    $('goal').disabled = false;
    document.body.dataset.state = 'variant';
    if (params.get('autoclick') === '1') $('goal').click();
  } catch (e) {
    log(`variant failed: ${e.code} ${e.message}`);
    document.body.dataset.state = 'error';
  }
}

$('goal').addEventListener('click', async () => {
  const cfg = Object.fromEntries(new FormData(form));
  const { logId } = await client.track(cfg.goal, { userId: cfg.userId, metadata: { source: 'example' } });
  const r = await client.flush();
  log(`goal ${cfg.goal} logged (logId ${logId}): sent ${r.sent}, pending ${r.pending}`);
  document.body.dataset.state = r.sent > 0 ? 'logged' : 'error';
});

form.addEventListener('submit', (e) => { e.preventDefault(); show(); });
if (params.get('key')) show();
