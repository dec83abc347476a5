// The browser host's sign-in handling (run by tests/web/test_ui_units.py via node --test), on a
// fake `fetch` and `EventSource` that record what the host asks for: the page key on every
// request, a fresh ticket for every event stream, reconnecting after the last event id seen,
// and a sign-out when the daemon refuses the key.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createHttpHost } from '../../../daemon/agentd/web/ui/host-http.js';

class FakeEventSource {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;
  /** @type {FakeEventSource[]} */
  static opened = [];

  constructor(url) {
    this.url = url;
    this.readyState = FakeEventSource.CONNECTING;
    this.listeners = {};
    FakeEventSource.opened.push(this);
  }

  addEventListener(name, listener) {
    (this.listeners[name] ??= []).push(listener);
  }

  emit(name, data, lastEventId = '') {
    for (const listener of this.listeners[name] ?? []) listener({ data: JSON.stringify(data), lastEventId });
  }

  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
}

/** A daemon stand-in: answers /api/hello and /api/ticket, refusing once `refuse` is set. */
function fakeDaemon() {
  const daemon = { requests: [], tickets: 0, refuse: false };
  globalThis.fetch = async (path, init) => {
    daemon.requests.push({ path, key: init.headers['X-Agentd-Key'] });
    if (daemon.refuse) return new Response(JSON.stringify({ error: { code: -32600, message: 'not signed in' } }), { status: 401 });
    if (path === '/api/hello') return Response.json({ cwd: '/p', version: '1' });
    if (path === '/api/ticket') return Response.json({ ticket: `t${++daemon.tickets}` });
    return Response.json({ ok: true });
  };
  globalThis.EventSource = FakeEventSource;
  FakeEventSource.opened = [];
  return daemon;
}

const until = async (check) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(check(), 'condition never held');
};

test('every request carries the page key; each stream gets its own ticket and resumes after the last id', async () => {
  const daemon = fakeDaemon();
  const host = await createHttpHost({ key: 'K' });
  const statuses = [];
  host.onConnection((status) => statuses.push(status));
  const events = [];
  host.onEvent((params) => events.push(params.seq));
  const subscribed = host.request('session/subscribe', { sessionId: 's', sinceSeq: 0 });
  await until(() => FakeEventSource.opened.length === 1);
  const first = FakeEventSource.opened[0];
  assert.equal(first.url, '/api/events?sessionId=s&ticket=t1&sinceSeq=0');
  first.emit('subscribed', { complete: true });
  assert.deepEqual(await subscribed, { complete: true });
  first.emit('message', { sessionId: 's', seq: 7, event: { type: 'agent_start' } }, '7');

  first.emit('error', {}); // the stream dropped: never retried with the spent ticket
  assert.equal(first.readyState, FakeEventSource.CLOSED);
  await until(() => FakeEventSource.opened.length === 2);
  assert.equal(FakeEventSource.opened[1].url, '/api/events?sessionId=s&ticket=t2&sinceSeq=7');
  FakeEventSource.opened[1].emit('subscribed', { complete: false });
  assert.deepEqual(statuses, ['connecting', 'live', 'offline', 'resync']);
  assert.deepEqual(events, [7]);
  assert.ok(daemon.requests.every((request) => request.key === 'K'));
});

test('a refused key signs the page out: no more requests, the stream closes, the page is told', async () => {
  const daemon = fakeDaemon();
  let signedOut = 0;
  const host = await createHttpHost({ key: 'K', onSignedOut: () => signedOut++ });
  const statuses = [];
  host.onConnection((status) => statuses.push(status));
  const subscribed = host.request('session/subscribe', { sessionId: 's' });
  await until(() => FakeEventSource.opened.length === 1);
  FakeEventSource.opened[0].emit('subscribed', { complete: true });
  await subscribed;
  daemon.refuse = true; // expired, or signed out elsewhere
  FakeEventSource.opened[0].emit('error', {});
  await until(() => statuses.includes('signed-out'));
  assert.equal(signedOut, 1);
  const asked = daemon.requests.length;
  await assert.rejects(host.request('session/list', {}), /signed out/);
  assert.equal(daemon.requests.length, asked);
  assert.equal(FakeEventSource.opened.length, 1);
});

test('sign out asks the daemon, then ends the page', async () => {
  const daemon = fakeDaemon();
  const host = await createHttpHost({ key: 'K' });
  const statuses = [];
  host.onConnection((status) => statuses.push(status));
  await host.signOut();
  assert.equal(daemon.requests.at(-1).path, '/api/signout');
  assert.deepEqual(statuses, ['signed-out']);
});
