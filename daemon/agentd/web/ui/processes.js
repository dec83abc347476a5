// @ts-check
// The session's background processes in the chat: what the reducer keeps of their events,
// and the strip pinned above the transcript (state, the tail of the output, a Kill button).

/** An element with a class and text (the reducer imports this module: no DOM helpers of
 * the view here). @param {string} tag @param {string} cls @param {string} [text] */
function el(tag, cls, text) {
  const node = document.createElement(tag);
  node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Characters of output kept per process for the strip. */
const TAIL_CHARS = 2000;
/** Lines of it shown. */
const TAIL_LINES = 4;

/**
 * @typedef {{id: string, command: string, pid: number, state: 'running' | 'exited' | 'killed',
 *   exitCode?: number | null, signal?: string | null, description?: string | null,
 *   runtimeMs: number, outputBytes: number, tail?: string}} ProcessInfo
 * @typedef {Record<string, ProcessInfo>} Processes
 */

/** The processes of `session/state` (the running ones) by id. @param {ProcessInfo[] | undefined} list */
export function processesOf(list) {
  /** @type {Processes} */
  const byId = {};
  for (const info of list ?? []) byId[info.id] = info;
  return byId;
}

/**
 * @template {{processes?: Processes}} S
 * @param {S} state @param {ProcessInfo} info @returns {S}
 */
function put(state, info) {
  return { ...state, processes: { ...(state.processes ?? {}), [info.id]: info } };
}

/**
 * Reducer handlers of the `process_*` events (merged into the reducer's table).
 * @type {Record<string, <S extends {processes?: Processes}>(state: S, e: any) => S>}
 */
export const processHandlers = {
  process_start: (state, e) => put(state, e.process),
  process_exit: (state, e) => put(state, e.process),
  process_output: (state, e) => {
    const known = state.processes?.[e.id];
    if (!known) return state;
    return put(state, { ...known, tail: ((known.tail ?? '') + e.text).slice(-TAIL_CHARS) });
  },
};

/** `running`, `exited 3`, `killed (SIGTERM)`. @param {ProcessInfo} info */
export function processState(info) {
  if (info.state === 'exited') return `exited ${info.exitCode}`;
  if (info.state === 'killed') return info.signal ? `killed (${info.signal})` : 'killed';
  return 'running';
}

/**
 * The strip: one row per process (newest last), hidden when the session has none.
 * @param {HTMLElement} node @param {Processes | undefined} processes
 * @param {((id: string) => void) | undefined} kill
 */
export function renderProcesses(node, processes, kill) {
  const list = Object.values(processes ?? {});
  const key = JSON.stringify(list.map((p) => [p.id, p.state, p.exitCode, p.signal, p.tail]));
  if (node.dataset.processes === key) return;
  node.dataset.processes = key;
  node.hidden = list.length === 0;
  const running = list.filter((p) => p.state === 'running').length;
  const rows = list.map((info) => processRow(info, kill));
  node.replaceChildren(el('div', 'processes-head', `Background processes · ${running} running`), ...rows);
}

/** @param {ProcessInfo} info @param {((id: string) => void) | undefined} kill */
function processRow(info, kill) {
  const row = el('div', `process process--${info.state}`);
  row.dataset.id = info.id;
  const head = el('div', 'process-head');
  const about = info.description ? ` (${info.description})` : '';
  head.append(
    el('span', 'process-id', info.id),
    el('span', 'process-state', processState(info)),
    el('code', 'process-command', info.command + about),
  );
  if (info.state === 'running' && kill) {
    const button = /** @type {HTMLButtonElement} */ (el('button', 'process-kill', 'Kill'));
    button.type = 'button';
    button.title = `Stop ${info.id} (TERM, then KILL)`;
    button.addEventListener('click', () => {
      button.disabled = true;
      kill(info.id);
    });
    head.append(button);
  }
  row.append(head);
  const lines = (info.tail ?? '').replace(/\n$/, '').split('\n').slice(-TAIL_LINES).join('\n');
  if (lines) row.append(el('pre', 'process-tail', lines));
  return row;
}
