// @ts-check
// The chat controller: joins a host (see ../README.md, "The host interface") to the reducer
// and the view. It is the only module that talks to the host; it knows nothing about HTTP,
// postMessage or JSON-RPC framing.

import { MAX_CHILD_STEPS, initialState, loadChildSteps, loadHistory, reduce } from './reducer.js';
import { processesOf } from './processes.js';
import { createView } from './view.js';

/** How many of a subagent's latest messages a reopened task card reads for its steps. */
const CHILD_PAGE = 2 * MAX_CHILD_STEPS;

/**
 * @typedef {{
 *   request: (method: string, params?: object) => Promise<any>,
 *   onEvent: (listener: (params: import('./reducer.js').SessionEventParams) => void) => void,
 *   onServerRequest?: (handler: (method: string, params: any) => Promise<any>) => void,
 *   onConnection?: (listener: (status: 'connecting' | 'live' | 'offline' | 'resync' | 'closed' | 'signed-out') => void) => void,
 *   signOut?: () => Promise<void>,
 *   cwd?: string,
 *   version?: string,
 *   openDiff?: (item: import('./reducer.js').ToolItem) => void,
 *   openLocation?: (path: string, line?: number | null) => void,
 * }} Host
 * @typedef {{sessionId?: string | null, cwd?: string, sidebar?: boolean,
 *   onSessionChange?: (sessionId: string | null) => void,
 *   confirm?: (question: string) => boolean | Promise<boolean>}} ChatOptions
 */

/** `paths` relative to `cwd` when beneath it, joined for a sentence. */
function fileList(paths, cwd) {
  const prefix = cwd.endsWith('/') ? cwd : `${cwd}/`;
  return paths.map((path) => (cwd && path.startsWith(prefix) ? path.slice(prefix.length) : path)).join(', ');
}

/** The conflicts of a rewind result as a sentence: `notes.md (changed since …)`. */
function conflictList(conflicts, cwd) {
  return conflicts.map((c) => `${fileList([c.path], cwd)} (${c.message})`).join('; ');
}

/**
 * The confirmation of a rewind: what the dry run says it would restore and remove, and the
 * conflicts that stop it unless forced (confirming one that has conflicts forces it).
 * @param {{restored: string[], removed: string[], conflicts: {path: string, message: string}[]}} preview
 * @param {string} cwd
 */
export function rewindQuestion(preview, cwd) {
  const lines = ['Rewind to before this prompt? The conversation after it is set aside (kept as a branch).'];
  if (preview.restored.length) lines.push(`Restore: ${fileList(preview.restored, cwd)}`);
  if (preview.removed.length) lines.push(`Remove: ${fileList(preview.removed, cwd)}`);
  if (preview.conflicts.length) {
    lines.push(`Conflicts: ${conflictList(preview.conflicts, cwd)}`);
    lines.push('A rewind stops at conflicts. OK rewinds anyway: changed files are overwritten, the others left as they are.');
  }
  if (!(preview.restored.length || preview.removed.length || preview.conflicts.length)) lines.push('No files to restore.');
  return lines.join('\n');
}

/**
 * The banner after a rewind: null when every file was put back, else what was left alone
 * (or, when conflicts stopped it, that nothing moved).
 * @param {{applied: boolean, conflicts: {path: string, message: string}[]}} result @param {string} cwd
 */
export function rewindReport(result, cwd) {
  if (!result.applied) return `Not rewound (nothing changed): ${conflictList(result.conflicts, cwd)}`;
  if (!result.conflicts.length) return null;
  return `Rewound. Left alone: ${conflictList(result.conflicts, cwd)}`;
}

/**
 * Build the chat inside `root`, talking to agentd through `host`.
 * @param {HTMLElement} root
 * @param {Host} host
 * @param {ChatOptions} [options]
 */
export function mountChat(root, host, options = {}) {
  /** @type {import('./view.js').AppState} */
  let app = {
    chat: initialState(), session: null, sessions: [], models: [], defaultModel: null, newModel: null,
    providerHelp: false, connection: 'connecting', banner: null, commands: [],
  };
  /** @type {Map<string, (result: {outcome: string} | null) => void>} */
  const waiters = new Map();
  const cwd = options.cwd ?? host.cwd ?? '';
  const confirm = options.confirm ?? ((q) => globalThis.confirm(q));
  /** @type {string | null} the session this view is rewinding (it reloads it itself) */
  let rewinding = null;
  /** @type {(() => void)[]} called at the next `agent_start` of the open session */
  const startWaiters = [];

  function set(change) {
    app = { ...app, ...change };
    view.update(app);
  }

  function fail(error) {
    set({ banner: error?.message ?? String(error) });
  }

  async function call(method, params) {
    try {
      const result = await host.request(method, params);
      if (app.banner) set({ banner: null });
      return result;
    } catch (error) {
      fail(error);
      throw error;
    }
  }

  async function refreshSessions() {
    const page = await host.request('session/list', { limit: 200 }).catch(() => null);
    if (page) set({ sessions: page.sessions });
  }

  async function refreshModels() {
    const result = await host.request('models/list', cwd ? { cwd } : {}).catch(() => null);
    if (!result) return;
    const { defaultProvider, defaultModel } = result;
    const fallback = result.models.find((/** @type {any} */ m) => m.provider === defaultProvider);
    const model = defaultModel ?? fallback?.model;
    set({
      models: result.models,
      defaultModel: defaultProvider && model ? `${defaultProvider}/${model}` : null,
      providerHelp: app.providerHelp || !defaultProvider,
    });
  }

  /** The custom commands of the open session (or of a new one in `cwd`), for the `/` menu. */
  async function refreshCommands() {
    const sessionId = app.session?.sessionId;
    if (!sessionId && !cwd) return;
    const result = await host.request('session/commands', sessionId ? { sessionId } : { cwd }).catch(() => null);
    if (result && app.session?.sessionId === sessionId) set({ commands: result.commands });
  }

  /** A built-in `/command` of the page (see slash.js). */
  async function runCommand(name, args) {
    const sessionId = app.session?.sessionId;
    if (name === 'clear') actions.newSession();
    else if (name === 'fork') await actions.forkSession();
    else if (name === 'model' && args) {
      const [provider, ...rest] = args.split('/');
      if (rest.length && sessionId) await actions.setModel(provider, rest.join('/'));
      else fail(new Error('Use /model PROVIDER/MODEL, e.g. /model mock/mock-model'));
    } else if (name === 'model') fail(new Error('Use /model PROVIDER/MODEL (the picker above lists them)'));
    else if (name === 'compact' && sessionId) {
      const result = await call('session/compact', args ? { sessionId, instructions: args } : { sessionId });
      if (!result.compacted) fail(new Error('Nothing to compact yet.'));
    } else if (name === 'compact') fail(new Error('Nothing to compact: the chat has not started.'));
  }

  /** `chat` with the steps of each ended task's card read from its subagent's session (the
   * latest page; a child that cannot be read keeps a card without steps). */
  async function withChildSteps(chat) {
    const tasks = chat.items.flatMap((item) =>
      item.kind === 'tool' && item.details?.type === 'task' ? [{ key: item.key, child: item.details.childSessionId }] : []);
    const pages = await Promise.all(tasks.map((task) =>
      host.request('session/messages', { sessionId: task.child, limit: CHILD_PAGE }).catch(() => null)));
    return tasks.reduce((next, task, i) => (pages[i] ? loadChildSteps(next, task.key, pages[i].messages) : next), chat);
  }

  /** Show `sessionId`: its history, then its events (`fresh`: only those from now on, not
   * the buffered ones — after a rewind they belong to the discarded turns). */
  async function openSession(sessionId, fresh = false) {
    const previous = app.session?.sessionId;
    if (previous && previous !== sessionId) await host.request('session/unsubscribe', { sessionId: previous }).catch(() => {});
    const loaded = await call('session/load', { sessionId });
    const history = await call('session/messages', { sessionId });
    const state = await call('session/state', { sessionId });
    let chat = loadHistory(initialState(sessionId), history.messages, history.hookBlocks, loaded.lastSeq);
    chat = await withChildSteps(chat);
    chat = { ...chat, running: state.status === 'running', queue: { steering: state.steering, followUp: state.followUp }, plan: state.plan ?? [] };
    chat = { ...chat, processes: processesOf(state.processes) };
    if (fresh) view.reset(); // drawn items of the discarded turns go
    set({ chat, session: loaded.session, banner: null });
    options.onSessionChange?.(sessionId);
    refreshCommands();
    // Replay what the daemon still buffers (a run in progress), then follow live events.
    await call('session/subscribe', { sessionId, sinceSeq: fresh ? loaded.lastSeq : 0 });
    view.focusInput();
  }

  async function newSession() {
    /** @type {{cwd: string, provider?: string, model?: string}} */
    const params = { cwd };
    if (app.newModel) {
      const [provider, ...rest] = app.newModel.split('/');
      Object.assign(params, { provider, model: rest.join('/') });
    }
    let info;
    try {
      info = await call('session/new', params);
    } catch (error) {
      // No provider: the page's help says how to configure one (the error says it too).
      if (/no LLM provider/i.test(error?.message ?? '')) set({ providerHelp: true });
      throw error;
    }
    await openSession(info.sessionId);
    refreshSessions();
    return info.sessionId;
  }

  /** @type {import('./view.js').Actions} */
  const actions = {
    // Resolves false when the message could not be sent (the view puts it back in the box).
    async send(text, mode, images = []) {
      try {
        const sessionId = app.session?.sessionId ?? (await newSession());
        if (mode === 'prompt') {
          const params = images.length ? { sessionId, text, images } : { sessionId, text };
          const started = new Promise((resolve) => startWaiters.push(() => resolve(true)));
          const done = call('session/prompt', params); // resolves when the run ends
          done.then(refreshSessions, () => {});
          // Sent once the run starts; a prompt refused before its run (an unknown /command,
          // busy, bad input) comes back to the box (the view puts it back).
          return await Promise.race([started, done.then(() => true, () => false)]);
        }
        await call(mode === 'steer' ? 'session/steer' : 'session/followUp', { sessionId, text });
        return true;
      } catch {
        return false; // shown in the banner
      }
    },
    cancel() {
      if (app.session) call('session/cancel', { sessionId: app.session.sessionId }).catch(() => {});
    },
    killProcess(processId) {
      if (app.session) call('session/killProcess', { sessionId: app.session.sessionId, processId }).catch(() => {});
    },
    newSession() {
      // A blank chat; the session is created with its first message.
      const previous = app.session?.sessionId;
      if (previous) host.request('session/unsubscribe', { sessionId: previous }).catch(() => {});
      set({ chat: initialState(), session: null, banner: null });
      options.onSessionChange?.(null);
      refreshCommands();
      view.focusInput();
    },
    openSession(sessionId) {
      openSession(sessionId).catch(() => {});
    },
    async deleteSession(sessionId) {
      if (!(await confirm('Delete this session and its file?'))) return;
      try {
        await call('session/delete', { sessionId, force: true });
      } catch {
        return;
      }
      if (app.session?.sessionId === sessionId) {
        set({ chat: initialState(), session: null });
        options.onSessionChange?.(null);
      }
      refreshSessions();
    },
    async forkSession() {
      if (!app.session) return;
      try {
        const info = await call('session/fork', { sessionId: app.session.sessionId });
        await openSession(info.sessionId);
        refreshSessions();
      } catch {
        /* shown in the banner */
      }
    },
    async setModel(provider, model) {
      if (!app.session) {
        set({ newModel: `${provider}/${model}` }); // the next new chat's
        return;
      }
      try {
        const info = await call('session/setModel', { sessionId: app.session.sessionId, provider, model });
        set({ session: info });
      } catch {
        set({ session: { ...app.session } }); // re-render the picker with the current model
      }
    },
    command(name, args) {
      runCommand(name, args).catch(() => {});
    },
    async rewindTo(entryId) {
      const sessionId = app.session?.sessionId;
      if (!sessionId) return;
      try {
        const preview = await call('session/rewind', { sessionId, entryId, dryRun: true });
        if (!(await confirm(rewindQuestion(preview, app.session?.cwd ?? cwd)))) return;
        // This view reloads itself: a session_rewound arriving meanwhile must not reload it
        // a second time at once (the second subscription would supersede this one's).
        rewinding = sessionId;
        try {
          const force = preview.conflicts.length > 0; // the question offered to force it
          const result = await call('session/rewind', force ? { sessionId, entryId, force } : { sessionId, entryId });
          if (!result.applied) {
            set({ banner: rewindReport(result, app.session?.cwd ?? cwd) });
            return;
          }
          await openSession(sessionId, true);
          view.restoreDraft(result.prompt);
          set({ banner: rewindReport(result, app.session?.cwd ?? cwd) });
        } finally {
          rewinding = null;
        }
        refreshSessions();
      } catch {
        /* shown in the banner */
      }
    },
    answerPermission(toolCallId, outcome) {
      const waiter = waiters.get(toolCallId);
      waiters.delete(toolCallId);
      waiter?.({ outcome });
      view.focusInput();
    },
    // Hosts with a sign-in (the web page) offer a "Sign out" button.
    signOut: host.signOut
      ? () => {
          host.signOut?.().catch(() => {});
        }
      : undefined,
    // Editor hosts open files and diffs; without them the cards show no such links.
    openDiff: host.openDiff?.bind(host),
    openLocation: host.openLocation?.bind(host),
  };

  const view = createView(root, actions, { sidebar: options.sidebar });

  host.onEvent((params) => {
    if (params.event.type === 'session_rewound') {
      // This view or another rewound the session: show it as it is now (the events so far
      // include the discarded turns).
      const open = params.sessionId === app.session?.sessionId;
      if (open && rewinding !== params.sessionId) openSession(params.sessionId, true).catch(() => {});
      return;
    }
    const chat = reduce(app.chat, params);
    if (chat === app.chat) return;
    const type = params.event.type;
    if (type === 'permission_resolved') {
      waiters.get(params.event.toolCallId)?.(null);
      waiters.delete(params.event.toolCallId);
    }
    set({ chat });
    if (type === 'agent_start') for (const resolve of startWaiters.splice(0)) resolve();
    if (type === 'agent_end' || type === 'agent_start') refreshSessions();
    if (type === 'agent_end') refreshCommands();
  });
  host.onServerRequest?.((method, params) => {
    if (method !== 'session/requestPermission') return Promise.reject(new Error(`unsupported request ${method}`));
    return new Promise((resolve) => {
      waiters.get(params.toolCallId)?.(null);
      waiters.set(params.toolCallId, resolve);
    });
  });
  host.onConnection?.((connection) => {
    if (connection === 'resync') {
      set({ connection: 'live' });
      if (app.session) openSession(app.session.sessionId).catch(() => {});
    } else if (connection === 'closed') {
      set({ connection: 'offline', banner: 'Disconnected from agentd (was it restarted?). Open a new link: run `agentctl web`.' });
    } else if (connection === 'signed-out') {
      set({ connection: 'signed-out', banner: 'Signed out of agentd. Run `agentctl web` to sign in again.' });
    } else {
      set({ connection });
    }
  });

  view.update(app);
  refreshSessions();
  refreshModels();
  if (!options.sessionId) refreshCommands();
  const ready = options.sessionId ? openSession(options.sessionId).catch(() => {}) : Promise.resolve();
  return {
    /** Settles when the initial session (if any) is open. */
    ready,
    /** The current view state (for tests and hosts). */
    get state() {
      return app;
    },
    openSession,
    newSession,
    view,
  };
}
