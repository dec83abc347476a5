// @ts-check
// The VS Code host of the shared chat UI (daemon/agentd/web/ui, "The host interface"): every
// call goes to the extension by postMessage and comes back the same way (see src/chatView.ts
// for the messages). Runs inside the webview; no Node, no `vscode` module.

/* global acquireVsCodeApi */
import { fileChange } from '../../../../daemon/agentd/web/ui/details.js';

/** An error answer of the daemon, with its JSON-RPC `code`. */
export class HostError extends Error {
  /** @param {string} message @param {number} code */
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

/**
 * @param {{postMessage: (message: any) => void, getState: () => any, setState: (s: any) => void}} [api]
 */
export function createVsCodeHost(api = acquireVsCodeApi()) {
  let nextId = 1;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  const pending = new Map();
  /** @type {Map<number, (ok: boolean) => void>} */
  const confirms = new Map();
  const listeners = [];
  const watchers = [];
  const commands = [];
  /** @type {((method: string, params: any) => Promise<any>) | null} */
  let serverRequest = null;
  let resolveInit;
  const init = new Promise((resolve) => (resolveInit = resolve));

  const HANDLERS = {
    init: (m) => resolveInit({ cwd: m.cwd, sessionId: m.sessionId ?? api.getState()?.sessionId ?? null }),
    response: (m) => {
      const waiter = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) waiter?.reject(new HostError(m.error.message, m.error.code));
      else waiter?.resolve(m.result);
    },
    event: (m) => listeners.forEach((listener) => listener(m.params)),
    serverRequest: (m) => {
      const answer = serverRequest ? serverRequest(m.method, m.params) : Promise.resolve(null);
      answer.then((result) => api.postMessage({ type: 'serverResponse', id: m.id, result }));
    },
    serverRequestSettled: () => {},
    connection: (m) => watchers.forEach((watch) => watch(m.status)),
    confirmed: (m) => {
      confirms.get(m.id)?.(m.ok);
      confirms.delete(m.id);
    },
    command: (m) => commands.forEach((run) => run(m)),
  };

  window.addEventListener('message', (message) => HANDLERS[message.data?.type]?.(message.data));

  const host = {
    cwd: '',
    /** Settles with {cwd, sessionId} once the extension answered `ready`. */
    init,
    request(method, params = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        api.postMessage({ type: 'request', id, method, params });
      });
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
    /** @param {(command: {name: string, sessionId?: string}) => void} run */
    onCommand(run) {
      commands.push(run);
    },
    /** A modal question asked by the workbench (webviews cannot show `confirm`). */
    confirm(question) {
      const id = nextId++;
      return new Promise((resolve) => {
        confirms.set(id, resolve);
        api.postMessage({ type: 'confirm', id, question });
      });
    },
    sessionChanged(sessionId) {
      api.setState({ ...(api.getState() ?? {}), sessionId });
      api.postMessage({ type: 'session', sessionId });
    },
    /** @param {import('../../../../daemon/agentd/web/ui/reducer.js').ToolItem} item */
    openDiff(item) {
      const change = fileChange(item.details);
      api.postMessage({ type: 'openDiff', toolCallId: item.key, path: change?.path, diff: change?.diff });
    },
    openLocation(path, line) {
      api.postMessage({ type: 'openLocation', path, line });
    },
  };
  api.postMessage({ type: 'ready' });
  return host;
}
