// @ts-check
// The browser host: the host interface (../README.md) over agentd's HTTP JSON API and
// Server-Sent Events. Requests are `POST /api/<method>` with the native params as the body and
// the page key in the `X-Agentd-Key` header (the cookie alone is refused: every server on this
// host receives it). `session/subscribe` opens the session's event stream (`GET /api/events`)
// with a one-time ticket (`POST /api/ticket`: an EventSource cannot send headers); the stream's
// `id:` is the event's seq, so after a drop the host reconnects with a new ticket and
// `sinceSeq` set to the last id it saw, and the daemon replays exactly what was missed.

/** An error answer of the API: the JSON-RPC `code` and `message`. */
export class HostError extends Error {
  /** @param {string} message @param {number} code @param {number} status */
  constructor(message, code, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

const RETRY_FIRST = 500;
const RETRY_MAX = 10_000;

/**
 * @param {{key: string, onSignedOut?: () => void}} options  `key`: the page key from sign-in;
 *   `onSignedOut`: called once when the daemon no longer accepts it (signed out, expired, or a
 *   restarted daemon).
 * @returns {Promise<import('./chat.js').Host & {signOut: () => Promise<void>}>}
 */
export async function createHttpHost({ key, onSignedOut }) {
  /** @type {((params: any) => void)[]} */
  const listeners = [];
  /** @type {((status: string) => void)[]} */
  const watchers = [];
  /** @type {((method: string, params: any) => Promise<any>) | null} */
  let serverRequest = null;
  /** @type {EventSource | null} */
  let source = null;
  /** @type {object | null} the current subscription (a newer one supersedes it) */
  let current = null;
  let signedOut = false;

  const status = (value) => watchers.forEach((w) => w(value));

  function endSignIn() {
    if (signedOut) return;
    signedOut = true;
    current = null;
    source?.close();
    source = null;
    status('signed-out');
    onSignedOut?.();
  }

  /**
   * @param {string} path
   * @param {object} [body]
   */
  async function api(path, body) {
    if (signedOut) throw new HostError('signed out: run `agentctl web` to sign in again', -32600, 401);
    const headers = { 'X-Agentd-Key': key };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      if (response.status === 401) endSignIn();
      const error = data.error ?? {};
      throw new HostError(error.message ?? `HTTP ${response.status}`, error.code ?? -32603, response.status);
    }
    return data;
  }

  function askPermission(sessionId, event) {
    if (!serverRequest) return;
    const params = { sessionId, toolCallId: event.toolCallId, tool: event.tool, args: event.args, options: event.options };
    serverRequest('session/requestPermission', params).then((result) => {
      if (result) api('/api/permission/answer', { sessionId, toolCallId: event.toolCallId, outcome: result.outcome }).catch(() => {});
    });
  }

  function askQuestion(sessionId, event) {
    if (!serverRequest) return;
    serverRequest('session/askQuestion', { sessionId, ...event }).then((result) => {
      if (result) api('/api/question/answer', { sessionId, questionId: event.questionId, answers: result.answers }).catch(() => {});
    });
  }

  function dispatch(message) {
    // One message carries one event, or an array of the events of one server step.
    const data = JSON.parse(message.data);
    for (const params of Array.isArray(data) ? data : [data]) {
      listeners.forEach((listener) => listener(params));
      if (params.event.type === 'permission_request') askPermission(params.sessionId, params.event);
      if (params.event.type === 'question_request') askQuestion(params.sessionId, params.event);
    }
  }

  /**
   * Follow a session's events; resolves with the `session/subscribe` result of the first
   * connection, reconnects (new ticket, `sinceSeq` = the last id seen) after a drop.
   */
  function subscribe(sessionId, sinceSeq) {
    source?.close();
    source = null;
    const subscription = {};
    current = subscription;
    status('connecting');
    let lastSeq = sinceSeq ?? null;
    let first = true;
    let delay = RETRY_FIRST;
    return new Promise((resolve, reject) => {
      const retry = () => {
        status('offline');
        setTimeout(open, delay);
        delay = Math.min(delay * 2, RETRY_MAX);
      };
      const open = async () => {
        if (current !== subscription) return;
        let ticket;
        try {
          ticket = (await api('/api/ticket', {})).ticket;
        } catch (error) {
          if (first || signedOut) reject(error);
          else if (current === subscription) retry();
          return;
        }
        if (current !== subscription) return;
        const query = new URLSearchParams({ sessionId, ticket });
        if (lastSeq !== null) query.set('sinceSeq', String(lastSeq));
        const stream = new EventSource(`/api/events?${query}`);
        source = stream;
        stream.addEventListener('subscribed', (message) => {
          const result = JSON.parse(message.data);
          delay = RETRY_FIRST;
          // A reconnect the daemon can no longer replay for (its buffer moved on): the UI must
          // reload the session.
          status(!first && !result.complete ? 'resync' : 'live');
          if (first) resolve(result);
          first = false;
        });
        stream.addEventListener('message', (message) => {
          if (message.lastEventId) lastSeq = Number(message.lastEventId);
          dispatch(message);
        });
        stream.addEventListener('error', () => {
          if (stream !== source) return;
          // The ticket is spent: never let the browser retry with it; reconnect with a new one.
          stream.close();
          source = null;
          if (first) reject(new HostError('the event stream was refused', -32600, 0));
          else retry();
        });
      };
      open();
    });
  }

  const hello = await api('/api/hello');
  return {
    cwd: hello.cwd,
    version: hello.version,
    async request(method, params = {}) {
      if (method === 'session/subscribe') return subscribe(params.sessionId, params.sinceSeq);
      if (method === 'session/unsubscribe') {
        const was = source !== null;
        current = null;
        source?.close();
        source = null;
        return { ok: was };
      }
      return api(`/api/${method}`, params);
    },
    /** End every sign-in of this daemon (this page's included). */
    async signOut() {
      try {
        await api('/api/signout', {});
      } finally {
        endSignIn();
      }
    },
    onEvent(listener) {
      listeners.push(listener);
    },
    onServerRequest(handler) {
      serverRequest = handler;
    },
    onConnection(listener) {
      watchers.push(listener);
    },
  };
}
