// renderContent against a minimal DOM that refuses innerHTML: a block is
// built from elements, text and attributes only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderContent, createClient, memoryStorage } from '../src/index.js';
import { fakeFetch, json } from './fakes.js';

class FakeNode {
  constructor(tag, doc) {
    this.tagName = tag.toUpperCase();
    this.ownerDocument = doc;
    this.children = [];
    this.attributes = {};
    this.listeners = {};
    this.style = {};
    this.parentNode = null;
    this._text = '';
    this.value = '';
    this.checked = false;
  }
  set innerHTML(_) { throw new Error('innerHTML used'); }
  get innerHTML() { throw new Error('innerHTML read'); }
  set outerHTML(_) { throw new Error('outerHTML used'); }
  insertAdjacentHTML() { throw new Error('insertAdjacentHTML used'); }
  set textContent(v) { this._text = String(v); this.children = []; }
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(''); }
  get firstChild() { return this.children[0] || null; }
  appendChild(n) { n.parentNode = this; this.children.push(n); return n; }
  removeChild(n) { this.children = this.children.filter((c) => c !== n); n.parentNode = null; return n; }
  replaceChild(n, old) { this.children = this.children.map((c) => (c === old ? n : c)); n.parentNode = this; return old; }
  setAttribute(k, v) { this.attributes[k] = String(v); }
  getAttribute(k) { return k in this.attributes ? this.attributes[k] : null; }
  removeAttribute(k) { delete this.attributes[k]; }
  addEventListener(t, fn) { (this.listeners[t] ||= []).push(fn); }
  async dispatch(t) { await Promise.all((this.listeners[t] || []).map((fn) => fn({ preventDefault() {} }))); }
  all(pred, out = []) { for (const c of this.children) { if (pred(c)) out.push(c); c.all(pred, out); } return out; }
}

function fakeDocument() {
  const doc = { createElement: (tag) => new FakeNode(tag, doc) };
  return doc;
}

const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';

test('every item type renders with text and attributes only', () => {
  const doc = fakeDocument();
  const root = doc.createElement('div');
  root.appendChild(doc.createElement('span')); // replaced
  renderContent({ id: 4, items: [
    { type: 'heading', content: hostile },
    { type: 'text', content: 'Save 10%', styles: { fontSize: 16, color: '#333333', background: 'url(https://evil)', backgroundColor: 'url(https://evil.example/x)' } },
    { type: 'image', url: 'https://cdn.example/a.png', alt: hostile },
    { type: 'image', url: 'javascript:alert(1)' },
    { type: 'button', label: 'Shop now', url: '/shop' },
    { type: 'button', label: 'Bad link', url: 'javascript:alert(1)' },
    { type: 'mystery', content: 'skipped' },
  ] }, root);
  const kinds = root.children.map((c) => `${c.tagName}:${c.getAttribute('data-item-type')}`);
  assert.deepEqual(kinds, ['H2:heading', 'P:text', 'IMG:image', 'A:button', 'BUTTON:button']);
  assert.equal(root.children[0].textContent, hostile, 'markup is shown as text');
  assert.equal(root.children[0].children.length, 0);
  assert.deepEqual(root.children[1].style, { fontSize: '16px', color: '#333333' });
  assert.equal(root.children[2].getAttribute('src'), 'https://cdn.example/a.png');
  assert.equal(root.children[2].getAttribute('alt'), hostile);
  assert.equal(root.children[3].getAttribute('href'), '/shop');
  assert.equal(root.children[4].getAttribute('href'), null, 'a javascript: URL became a link');
});

test('a variant answer renders its content view', () => {
  const doc = fakeDocument();
  const root = doc.createElement('div');
  renderContent({ campaignId: 1, variantId: 2, contentViewId: 3, contentView: { id: 3, items: [{ type: 'text', content: 'hi' }] } }, root);
  assert.equal(root.textContent, 'hi');
});

test('a form item renders a form that submits through submitForm', async () => {
  const f = fakeFetch((req) => (req.body.data.email === 'bad'
    ? json(400, { error: { code: 'INVALID_REQUEST', message: 'request has invalid fields', details: { fields: { 'data.email': 'must be an email address' } } } })
    : json(201, { success: true, formSubmissionId: 9, submittedAt: '2026-01-01T00:00:00.000Z' })));
  const client = createClient({ key: 'k', appId: 1, baseUrl: 'http://svc.test/v1', fetch: f, storage: memoryStorage(), flushInterval: 0 });
  const doc = fakeDocument();
  const root = doc.createElement('div');
  const submitted = [];
  client.renderContent({ id: 5, items: [{ type: 'form', submitLabel: 'Join', successMessage: hostile, fields: [
    { name: 'email', type: 'email', label: 'Email', required: true },
    { name: 'age', type: 'number' },
    { name: 'terms', type: 'checkbox', label: 'I agree' },
    { name: 'plan', type: 'select', options: ['free', 'pro'] },
  ] }] }, root, { document: doc, userId: 'u1', onSubmit: (a) => submitted.push(a) });
  const form = root.children[0];
  assert.equal(form.tagName, 'FORM');
  const input = (name) => form.all((n) => n.getAttribute('name') === name)[0];
  assert.equal(input('email').getAttribute('type'), 'email');
  assert.equal(input('email').getAttribute('required'), '');
  assert.equal(input('plan').tagName, 'SELECT');
  assert.deepEqual(input('plan').children.map((o) => o.textContent), ['', 'free', 'pro']);
  assert.equal(form.all((n) => n.getAttribute('type') === 'submit')[0].textContent, 'Join');

  input('email').value = 'bad';
  await form.dispatch('submit');
  assert.equal(form.all((n) => n.getAttribute('class') === 'svc-field-error')[0].textContent, 'must be an email address');
  assert.equal(root.children[0], form, 'form replaced after a refusal');

  input('email').value = 'ann@example.com';
  input('age').value = '42';
  input('terms').checked = true;
  input('plan').value = 'pro';
  await form.dispatch('submit');
  assert.deepEqual(f.calls.at(-1).body.data, { email: 'ann@example.com', age: 42, terms: true, plan: 'pro' });
  assert.equal(f.calls.at(-1).body.contentViewId, 5);
  assert.equal(f.calls.at(-1).body.userId, 'u1');
  assert.equal(root.children[0].textContent, hostile, 'success message shown as text');
  assert.equal(submitted[0].formSubmissionId, 9);
  await client.close();
});

test('a variant whose block is not published (contentView null) renders nothing', () => {
  const doc = fakeDocument();
  const el = doc.createElement('div');
  el.appendChild(doc.createElement('p'));
  const answer = { campaignId: 1, variantId: 2, variantName: 'B', contentViewId: 3, contentView: null, impressionRecorded: true };
  assert.equal(renderContent(answer, el, { document: doc }), el);
  assert.equal(el.children.length, 0);
  renderContent(null, el, { document: doc });
  assert.equal(el.children.length, 0);
});
