// The browser host: the host interface (../README.md) over agentd's HTTP JSON API and
// Server-Sent Events. Requests are `POST /api/<method>` with the native params as the body;
// `session/subscribe` opens the session's event stream (`GET /api/events`), whose `id:` is the
// event's seq so the browser's automatic reconnect resumes where it stopped (`Last-Event-ID`).

/** An error answer of the API: the JSON-RPC `code` and `message`. */
export class HostError extends Error {
  /** @param {string} message @param {number} code @param {number} status */
  constructor(message, code, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/**
 * @param {string} path
 * @param {object} [body]
 */
async function api(path, body) {
  const response = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = data.error ?? {};
    throw new HostError(error.message ?? `HTTP ${response.status}`, error.code ?? -32603, response.status);
  }
  return data;
}

/** @returns {Promise<import('./chat.js').Host>} */
export async function createHttpHost() {
  const hello = await api('/api/hello');
  /** @type {((params: any) => void)[]} */
  const listeners = [];
  /** @type {((status: string) => void)[]} */
  const watchers = [];
  /** @type {((method: string, params: any) => Promise<any>) | null} */
  let serverRequest = null;
  /** @type {EventSource | null} */
  let source = null;
  /** @type {((result: any) => void) | null} */
  let subscribed = null;

  const status = (value) => watchers.forEach((w) => w(value));

  function askPermission(sessionId, event) {
    if (!serverRequest) return;
    const params = { sessionId, toolCallId: event.toolCallId, tool: event.tool, args: event.args, options: event.options };
    serverRequest('session/requestPermission', params).then((result) => {
      if (result) api('/api/permission/answer', { sessionId, toolCallId: event.toolCallId, outcome: result.outcome }).catch(() => {});
    });
  }

  function subscribe(sessionId, sinceSeq) {
    source?.close();
    const query = new URLSearchParams({ sessionId });
    if (sinceSeq !== undefined && sinceSeq !== null) query.set('sinceSeq', String(sinceSeq));
    const stream = new EventSource(`/api/events?${query}`);
    source = stream;
    status('connecting');
    return new Promise((resolve, reject) => {
      subscribed = resolve;
      let first = true;
      stream.addEventListener('subscribed', (message) => {
        const result = JSON.parse(message.data);
        // A reconnect whose Last-Event-ID the daemon can no longer replay from (the buffer
        // moved on, or the daemon restarted): the UI must reload the session.
        status(!first && !result.complete ? 'resync' : 'live');
        first = false;
        subscribed?.(result);
        subscribed = null;
      });
      stream.addEventListener('message', (message) => {
        // One message carries one event, or an array of the events of one server step.
        const data = JSON.parse(message.data);
        for (const params of Array.isArray(data) ? data : [data]) {
          listeners.forEach((listener) => listener(params));
          if (params.event.type === 'permission_request') askPermission(params.sessionId, params.event);
        }
      });
      stream.addEventListener('error', () => {
        if (stream !== source) return;
        // CONNECTING: the browser retries by itself. CLOSED: refused (a restarted daemon no
        // longer knows this page's cookie), so it will not come back.
        const closed = stream.readyState === EventSource.CLOSED;
        status(closed ? 'closed' : 'offline');
        if (closed) reject(new HostError('the event stream was refused', -32600, 0));
      });
    });
  }

  return {
    cwd: hello.cwd,
    version: hello.version,
    async request(method, params = {}) {
      if (method === 'session/subscribe') return subscribe(params.sessionId, params.sinceSeq);
      if (method === 'session/unsubscribe') {
        const was = source !== null;
        source?.close();
        source = null;
        return { ok: was };
      }
      return api(`/api/${method}`, params);
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
