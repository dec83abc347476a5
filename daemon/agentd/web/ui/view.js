// @ts-check
// Renders the app's view state into a root element, at most once per animation frame.
//
// `createView(root, actions, options)` builds the layout once; `view.update(state)` records the
// newest state and schedules one render; unchanged parts (compared by object identity) are
// skipped, so a stream of deltas costs one DOM update per frame for the item that grew.

import { attachImages } from './attach.js';
import { createItem, el, updateItem } from './items.js';
import { totalUsage } from './reducer.js';
import { renderProcesses } from './processes.js';
import { parseCommand, slashMenu } from './slash.js';
import { providerHelp } from './setup.js';
import { buildSidebar, renderSessionGroups } from './sidebar.js';

/**
 * @typedef {{
 *   chat: import('./reducer.js').ChatState,
 *   session: {sessionId: string, title?: string | null, provider: string, model: string,
 *     cwd: string} | null,
 *   sessions: {sessionId: string, title?: string | null, cwd: string, updatedAt: string,
 *     running?: boolean}[],
 *   models: {provider: string, model: string}[],
 *   defaultModel: string | null,
 *   newModel: string | null,
 *   providerHelp: boolean,
 *   connection: 'connecting' | 'live' | 'offline' | 'signed-out',
 *   banner: string | null,
 *   commands?: import('./slash.js').SlashCommand[],
 * }} AppState
 *   (`defaultModel`: "provider/model" new sessions get when none is chosen (null: no provider
 *   is configured); `newModel`: the one chosen in the picker for the next new chat;
 *   `providerHelp`: show how to configure a provider)
 * @typedef {{
 *   send: (text: string, mode: 'prompt' | 'steer' | 'followUp',
 *     images?: {type: 'image', data: string, mimeType: string}[]) => Promise<boolean> | void,
 *   cancel: () => void,
 *   newSession: () => void,
 *   openSession: (sessionId: string) => void,
 *   deleteSession: (sessionId: string) => void,
 *   forkSession: () => void,
 *   setModel: (provider: string, model: string) => void,
 *   answerPermission: (toolCallId: string, outcome: string) => void,
 *   command: (name: string, args: string) => void,
 *   rewindTo?: (entryId: string) => void,
 *   openDiff?: (item: import('./reducer.js').ToolItem) => void,
 *   openLocation?: (path: string, line?: number | null) => void,
 *   signOut?: () => void,
 *   killProcess?: (id: string) => void,
 * }} Actions
 */

const frame = globalThis.requestAnimationFrame?.bind(globalThis) ?? ((cb) => setTimeout(cb, 16));

/**
 * @param {HTMLElement} root
 * @param {Actions} actions
 * @param {{sidebar?: boolean}} [options]
 */
export function createView(root, actions, options = {}) {
  const dom = buildLayout(root, actions, options.sidebar !== false, () => {
    if (pending) view.update(pending);
  });
  /** @type {AppState | null} */
  let pending = null;
  /** @type {Partial<AppState>} */
  let shown = {};
  let scheduled = false;
  let behind = false; // an item has more to render than one frame allows
  const nodes = new Map();
  /** @type {Map<string, object>} */
  const drawn = new Map();

  function render() {
    scheduled = false;
    const state = pending;
    if (!state) return;
    if (state.chat.sessionId !== shown.chat?.sessionId) {
      dom.log.replaceChildren();
      nodes.clear();
      drawn.clear();
    }
    const log = dom.log;
    const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 40;
    const wasBehind = behind;
    behind = false;
    if (state.chat.items !== shown.chat?.items || wasBehind) renderItems(state.chat.items);
    if (state.sessions !== shown.sessions || state.session !== shown.session || dom.filter.value !== dom.filtered) {
      dom.filtered = dom.filter.value;
      renderSessionGroups(dom.list, state.sessions, dom.filter.value, state.session?.sessionId, actions);
    }
    if (state.models !== shown.models || state.session !== shown.session || state.newModel !== shown.newModel
      || state.defaultModel !== shown.defaultModel) renderModels(dom, state);
    if (state.providerHelp !== shown.providerHelp) dom.help.replaceChildren(...(state.providerHelp ? [providerHelp(document)] : []));
    dom.help.hidden = !state.providerHelp || Boolean(state.session);
    if (state.commands !== shown.commands) dom.slash.setCommands(state.commands ?? []);
    renderStatus(dom, state);
    if (atBottom) log.scrollTop = log.scrollHeight;
    shown = state;
    if (behind && !scheduled) {
      scheduled = true;
      frame(render);
    }
  }

  function renderItems(items) {
    if (nodes.size > items.length) dropGone(items); // a rewind took items away
    for (const item of items) {
      let node = nodes.get(item.key);
      if (!node) {
        node = createItem(item);
        nodes.set(item.key, node);
        dom.log.appendChild(node);
      }
      if (drawn.get(item.key) !== item) {
        node.hidden = shownAsPlan(item);
        if (updateItem(node, item, actions)) behind = true; // the rest next frame
        else drawn.set(item.key, item);
      }
    }
  }

  /** Remove the nodes of items no longer in `items`. */
  function dropGone(items) {
    const keys = new Set(items.map((item) => item.key));
    for (const [key, node] of nodes) {
      if (keys.has(key)) continue;
      node.remove();
      nodes.delete(key);
      drawn.delete(key);
    }
  }

  const view = {
    /** Record `state` and render it on the next animation frame. @param {AppState} state */
    update(state) {
      pending = state;
      if (!scheduled) {
        scheduled = true;
        frame(render);
      }
    },
    /** Render the recorded state now (tests, and before measuring). */
    flush: render,
    /** Put the cursor in the message box. */
    focusInput() {
      dom.input.focus();
    },
    /** Put `text` back in the message box unless something new was typed there. */
    restoreDraft(text) {
      if (dom.input.value.trim()) return;
      dom.input.value = text;
      dom.input.focus();
    },
    /** Forget what is drawn: the next render draws every item anew (after a rewind). */
    reset() {
      dom.log.replaceChildren();
      nodes.clear();
      drawn.clear();
      shown = { ...shown, chat: undefined };
    },
    dom,
  };
  return view;
}

function buildLayout(root, actions, withSidebar, refresh) {
  root.replaceChildren();
  root.classList.add('agentd-chat');
  const sidebar = el('nav', 'sidebar');
  sidebar.setAttribute('aria-label', 'Sessions');
  sidebar.hidden = !withSidebar;
  const main = el('main', 'chat');
  root.append(sidebar, main);
  const drawer = buildDrawer(root, sidebar, actions, refresh);
  drawer.menu.hidden = !withSidebar;
  const head = buildHeader(actions, drawer.menu);

  const banner = el('div', 'banner');
  banner.setAttribute('role', 'alert');
  banner.hidden = true;
  const plan = el('section', 'plan');
  plan.setAttribute('aria-label', 'Plan');
  plan.hidden = true;
  const processes = el('section', 'processes');
  processes.setAttribute('aria-label', 'Background processes');
  processes.hidden = true;
  const help = el('div', 'help');
  help.hidden = true;
  const log = el('div', 'log');
  log.setAttribute('role', 'log');
  log.setAttribute('aria-live', 'polite');
  log.setAttribute('aria-label', 'Conversation');
  log.tabIndex = 0;

  const composer = buildComposer(actions);
  const footer = el('footer', 'cost');
  footer.setAttribute('aria-label', 'Usage');
  main.append(head.header, banner, plan, processes, help, log, composer.form, footer);
  return {
    sidebar, list: drawer.list, filter: drawer.filter, filtered: '', menu: drawer.menu, ...head, banner, plan, help, log,
    footer, ...composer, processes, killProcess: actions.killProcess,
  };
}

/** The sidebar's content: "New chat", the filter, the session groups (a choice closes the drawer). */
function buildDrawer(root, sidebar, actions, refresh) {
  const drawer = buildSidebar(root, sidebar, refresh);
  const newButton = button('New chat', 'btn btn--primary new-chat', () => {
    drawer.closeDrawer();
    actions.newSession();
  });
  drawer.list.addEventListener('click', (event) => {
    if (/** @type {HTMLElement} */ (event.target).closest('.session-open')) drawer.closeDrawer();
  });
  sidebar.append(newButton, drawer.filter, drawer.list);
  return drawer;
}

/** The header: the drawer's menu button, the title, the model picker, Fork, status, Sign out. */
function buildHeader(actions, menu) {
  const header = el('header', 'chat-head');
  const title = el('h1', 'chat-title', 'agentd');
  const model = /** @type {HTMLSelectElement} */ (el('select', 'model-picker'));
  model.setAttribute('aria-label', 'Model');
  model.addEventListener('change', () => {
    const [provider, ...rest] = model.value.split('/');
    actions.setModel(provider, rest.join('/'));
  });
  const fork = button('Fork', 'btn fork', actions.forkSession);
  fork.title = 'Continue in a new session from here';
  const status = el('span', 'chat-status');
  status.setAttribute('role', 'status');
  header.append(menu, title, model, fork, status);
  const signOut = actions.signOut ? button('Sign out', 'btn sign-out', actions.signOut) : null;
  if (signOut) {
    signOut.title = 'End every sign-in of this agentd (all its browser pages)';
    header.append(signOut);
  }
  return { header, title, model, fork, status, signOut };
}

function button(text, className, onClick) {
  const node = /** @type {HTMLButtonElement} */ (el('button', className, text));
  node.type = 'button';
  node.addEventListener('click', () => onClick());
  return node;
}

function buildComposer(actions) {
  const form = el('form', 'composer');
  const queue = el('ul', 'queue');
  queue.setAttribute('aria-label', 'Queued messages');
  const input = /** @type {HTMLTextAreaElement} */ (el('textarea', 'input'));
  input.rows = 2;
  input.placeholder = 'Message the agent (Enter sends, Shift+Enter for a new line)';
  input.setAttribute('aria-label', 'Message');
  const send = /** @type {HTMLButtonElement} */ (el('button', 'btn btn--primary send', 'Send'));
  send.type = 'submit';
  const later = button('Queue', 'btn follow-up', () => submit('followUp'));
  later.title = 'Send when the agent has finished';
  const stop = button('Stop', 'btn btn--danger stop', () => actions.cancel());
  stop.title = 'Cancel the run (Esc)';
  const buttons = el('div', 'composer-buttons');
  const picker = imagePicker((files) => images.add(files));
  buttons.append(picker.button, picker.input, send, later, stop);
  const attachments = el('ul', 'attachments');
  attachments.setAttribute('aria-label', 'Attached images');
  const attachError = el('div', 'attach-error');
  attachError.setAttribute('role', 'alert');
  const slash = slashMenu(input);
  form.append(queue, attachments, attachError, slash.list, input, buttons);
  const images = attachImages(form, input, attachments, (message) => {
    attachError.textContent = message;
  });

  function submit(mode) {
    const text = input.value;
    if (!text.trim()) return;
    const command = parseCommand(text);
    const running = form.classList.contains('running');
    if (command && !command.builtIn && running) {
      attachError.textContent = `/${command.name} runs when the agent is idle: wait for the reply or press Stop.`;
      return;
    }
    input.value = '';
    attachError.textContent = '';
    if (command?.builtIn) {
      if (command.name === 'help') slash.showAll();
      else actions.command(command.name, command.args);
      return;
    }
    const chosen = mode ?? (running ? 'steer' : 'prompt');
    // Images go with a prompt; a steer or queued message keeps them for the next prompt.
    const taken = chosen === 'prompt' ? images.take() : [];
    const sent = actions.send(text, chosen, taken);
    // A message that could not be sent comes back to the box (unless a new one is being typed),
    // its images too.
    Promise.resolve(sent).then((ok) => {
      if (ok !== false) return;
      if (!input.value.trim()) input.value = text;
      if (taken.length) images.restore(taken);
      input.focus();
    });
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit();
  });
  input.addEventListener('keydown', (event) => {
    if (slash.handleKey(event)) return;
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  form.ownerDocument.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && form.classList.contains('running')) {
      event.preventDefault();
      actions.cancel();
    }
  });
  return { form, queue, input, send, later, stop, slash };
}

/** "Add image": a button opening the file chooser (phones have no paste or drop of files);
 * `add` gets the images chosen. */
function imagePicker(add) {
  const input = /** @type {HTMLInputElement} */ (el('input', 'attach-input'));
  input.type = 'file';
  input.accept = 'image/png,image/jpeg,image/gif,image/webp';
  input.multiple = true;
  input.hidden = true;
  input.setAttribute('aria-label', 'Images to attach');
  input.addEventListener('change', () => {
    add([...(input.files ?? [])]);
    input.value = ''; // choosing the same file again is a change too
  });
  const open = button('Add image', 'btn attach-image', () => input.click());
  open.title = 'Attach images to the next message (PNG, JPEG, GIF, WebP, up to 5 MB; paste or drop them too)';
  return { button: open, input };
}

/** The picker: the session's model, or for a new chat the one chosen for it (else the
 * configured default; with none, a "Choose a model" placeholder). Never disabled. */
function renderModels(dom, state) {
  const session = state.session;
  dom.model.replaceChildren();
  const values = state.models.map((m) => `${m.provider}/${m.model}`);
  const currentValue = session ? `${session.provider}/${session.model}` : state.newModel ?? state.defaultModel ?? '';
  if (currentValue && !values.includes(currentValue)) values.unshift(currentValue);
  if (!currentValue) {
    const placeholder = /** @type {HTMLOptionElement} */ (el('option', '', 'Choose a model…'));
    placeholder.value = '';
    placeholder.disabled = true;
    dom.model.appendChild(placeholder);
  }
  for (const value of values) {
    const option = /** @type {HTMLOptionElement} */ (el('option', '', value));
    option.value = value;
    dom.model.appendChild(option);
  }
  dom.model.value = currentValue;
  dom.model.title = session ? `Model of this session: ${currentValue}` : 'Model of the new chat';
}

function renderStatus(dom, state) {
  const chat = state.chat;
  const running = chat.running;
  dom.title.textContent = sessionTitle(state);
  const offline = state.connection === 'offline';
  const signedOut = state.connection === 'signed-out';
  dom.status.textContent = signedOut ? 'Signed out' : offline ? 'Reconnecting…' : running ? 'Working…' : '';
  if (dom.signOut) dom.signOut.disabled = signedOut;
  dom.input.disabled = signedOut;
  dom.status.classList.toggle('busy', running);
  dom.form.classList.toggle('running', running);
  dom.log.classList.toggle('running', running); // no "Rewind to here" while a run goes
  dom.send.textContent = running ? 'Steer' : 'Send';
  dom.later.hidden = !running;
  dom.stop.hidden = !running;
  dom.fork.disabled = !state.session || running;
  dom.banner.hidden = !state.banner;
  dom.banner.textContent = state.banner ?? '';
  dom.log.setAttribute('aria-busy', String(running));
  renderQueue(dom.queue, chat.queue);
  renderPlan(dom.plan, chat.plan ?? []);
  renderProcesses(dom.processes, chat.processes, dom.killProcess);
  const usage = totalUsage(chat);
  const run = chat.lastRun;
  const end = run && run.stopReason !== 'end_turn' ? ` · last run: ${run.stopReason.replace('_', ' ')}` : '';
  dom.footer.textContent = `${fmt(usage.inputTokens)} in · ${fmt(usage.outputTokens)} out · $${usage.cost.toFixed(4)}${end}`;
}

function sessionTitle(state) {
  const session = state.session;
  if (!session) return 'New chat';
  const listed = state.sessions.find((s) => s.sessionId === session.sessionId);
  return session.title || listed?.title || firstPrompt(state.chat) || `Session ${session.sessionId}`;
}

/** The first prompt's first line (up to 80 characters): the title while the daemon has not
 * given the session one yet (its first run). */
function firstPrompt(chat) {
  const user = chat.items.find((item) => item.kind === 'user' && (item.command || item.text.trim()));
  const text = user ? (user.command || user.text).trim().split('\n', 1)[0] : '';
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function renderQueue(list, queue) {
  const texts = [...queue.steering.map((t) => `steer: ${t}`), ...queue.followUp.map((t) => `next: ${t}`)];
  if (list.dataset.texts === texts.join('\u0000')) return;
  list.dataset.texts = texts.join('\u0000');
  list.replaceChildren(...texts.map((t) => el('li', 'queued', t)));
}

const PLAN_MARKS = { completed: '✔', in_progress: '▸', pending: '○' };

/**
 * True for a `todo` call that went well: the pinned plan shows it, so it gets no tool card
 * (its node stays, hidden, so a card that fails later appears where the call was).
 * @param {{kind: string, name?: string, status?: string, permission?: {pending: boolean} | null}} item
 */
export function shownAsPlan(item) {
  return item.kind === 'tool' && item.name === 'todo' && item.status !== 'error' && !item.permission?.pending;
}

/** The agent's plan, pinned above the transcript: a heading with progress, then each step. */
function renderPlan(node, plan) {
  const key = JSON.stringify(plan);
  if (node.dataset.plan === key) return;
  node.dataset.plan = key;
  node.hidden = plan.length === 0;
  const done = plan.filter((step) => step.status === 'completed').length;
  const steps = el('ol', 'plan-steps');
  for (const step of plan) {
    const row = el('li', `plan-step plan-step--${step.status}`);
    row.append(el('span', 'plan-mark', PLAN_MARKS[step.status] ?? '○'), el('span', 'plan-text', step.content));
    steps.appendChild(row);
  }
  node.replaceChildren(el('div', 'plan-head', `Plan · ${done}/${plan.length} done`), steps);
}

function fmt(n) {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
