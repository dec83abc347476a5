// @ts-check
// The chat's view state and the pure functions that build it from agentd's data.
//
// No DOM, no host, no timers: `reduce(state, params)` takes the params of one `session/event`
// notification and returns the next state (the old one is never modified, so a renderer can
// compare item objects by identity to see what changed). `loadHistory` builds the same items
// from `session/messages`. Both are idempotent per message id and tool call id, so a history
// snapshot followed by a replay of buffered events (a page reload mid-run) shows each message
// and tool call exactly once.

import { askedIn } from './details.js';
import { processHandlers } from './processes.js';

/**
 * @typedef {{type: 'text' | 'thinking', text: string}} TextBlock
 * @typedef {{kind: 'user', key: string, text: string, images: UserImage[], command?: string}} UserItem
 *   (`command`: the custom command typed, `text` being its expansion; `images`: those sent with it)
 * @typedef {{data: string, mimeType: string}} UserImage
 * @typedef {{kind: 'assistant', key: string, blocks: TextBlock[], streaming: boolean,
 *   stopReason?: string, error?: string, usage?: Usage, model?: string,
 *   retry?: RetryInfo | null, sources?: {url: string, title: string}[]}} AssistantItem
 *   (`sources`: the pages a provider-side search gave that the text cites, each once)
 * @typedef {{options: string[], pending: boolean, outcome?: string, reason?: string,
 *   callId?: string, tool?: string, preview?: ApprovalPreview | null,
 *   alwaysRule?: string | null}} Permission
 *   (`callId`, `tool`: a subagent's call waiting for approval, shown on its task's card;
 *   `preview`: what the call would do; `alwaysRule`: the rule an "always" answer adds)
 * @typedef {{questionId: string, questions: any[], pending: boolean, answers?: any[] | null,
 *   reason?: string, url?: string | null, server?: string | null}} Asked
 *   (questions to the user on the card of the call that asks: `ask_user`, an MCP tool, a task
 *   whose subagent asks; settled with `answers` or, without them, `reason`)
 * @typedef {{kind: 'tool', key: string, name: string, args: Record<string, unknown>,
 *   argsText: string, toolKind: string, status: 'pending' | 'running' | 'done' | 'error',
 *   output: string, result: string, details: ToolDetails | null,
 *   permission: Permission | null, question?: Asked | null,
 *   locations: {path: string, line?: number | null}[],
 *   child?: {sessionId: string, agent: string, description: string, steps?: ChildStep[]}}} ToolItem
 * @typedef {{key: string, kind: 'tool', name: string, args: Record<string, unknown>,
 *   status: 'running' | 'done' | 'error'} | {key: string, kind: 'text', text: string}} ChildStep
 *   (what a task's subagent did, nested on the task's card: its tool calls and its replies)
 * @typedef {{kind: 'notice', key: string, level: 'info' | 'warning' | 'error' | 'blocked', text: string,
 *   fromHistory?: boolean}} NoticeItem
 *   (`fromHistory`: a hook's block placed by `session/messages`, not yet matched by its replayed event)
 * @typedef {{attempt: number, maxAttempts: number, delayMs: number, error: string,
 *   waiting: boolean}} RetryInfo
 *   (a wait for the model after a failed call: `attempt` failed, the next comes in `delayMs`;
 *   `waiting` is false once the model answered or the run ended)
 * @typedef {{kind: 'retry', key: string} & RetryInfo} RetryItem
 * @typedef {UserItem | AssistantItem | ToolItem | NoticeItem | RetryItem} Item
 * @typedef {{inputTokens?: number, outputTokens?: number, cacheReadTokens?: number,
 *   cacheWriteTokens?: number, cost?: number}} Usage
 * @typedef {{stopReason: string, turns: number, cost: number, error: string | null}} RunEnd
 * @typedef {{content: string, status: 'pending' | 'in_progress' | 'completed', priority: string}}
 *   PlanStep
 * @typedef {{
 *   sessionId: string | null,
 *   lastSeq: number,
 *   historySeq: number,
 *   running: boolean,
 *   items: Item[],
 *   index: Record<string, number>,
 *   open: string | null,
 *   queue: {steering: string[], followUp: string[]},
 *   plan: PlanStep[],
 *   processes?: import('./processes.js').Processes,
 *   retryKey: string | null,
 *   lastRun: RunEnd | null,
 *   toolByIndex: Record<number, string>,
 *   children: Record<string, string>,
 * }} ChatState
 * @typedef {{sessionId: string, seq: number, event: {type: string, [k: string]: any}}}
 *   SessionEventParams
 * @typedef {import('./protocol').ToolDetails} ToolDetails
 * @typedef {import('./protocol').ApprovalPreview} ApprovalPreview
 * @typedef {import('./protocol').UserMessage | import('./protocol').AssistantMessage
 *   | import('./protocol').ToolResultMessage} Message
 * @typedef {import('./protocol').ToolExecutionEnd} ToolExecutionEnd
 * @typedef {import('./protocol').HookResult} HookResult
 * @typedef {import('./protocol').HookBlock} HookBlock
 */

/** @returns {ChatState} the state of a session nothing is known about yet. */
export function initialState(sessionId = null) {
  return {
    sessionId,
    lastSeq: 0,
    historySeq: 0,
    running: false,
    items: [],
    index: {},
    open: null,
    queue: { steering: [], followUp: [] },
    plan: [],
    retryKey: null,
    lastRun: null,
    toolByIndex: {},
    children: {},
  };
}

/**
 * The state after one `session/event`. Events of other sessions and already seen sequence
 * numbers (a reconnect's replay overlapping what arrived) leave the state unchanged.
 * @param {ChatState} state
 * @param {SessionEventParams} params
 * @returns {ChatState}
 */
export function reduce(state, params) {
  if (params.sessionId !== state.sessionId) return subagentEvent(state, params);
  if (params.seq > 0 && params.seq <= state.lastSeq) return state;
  const handler = HANDLERS[params.event.type];
  const next = handler ? handler(state, params.event, params.seq) : state;
  return params.seq > 0 ? { ...next, lastSeq: params.seq } : next;
}

/**
 * The state with the messages of `session/messages` (or `session/load` replay) merged in, and
 * the hooks that blocked something (`hookBlocks`) each after the message it followed.
 * `historySeq`: the session's last event seq when the history was read — a replayed
 * `hook_result` up to it is the block already shown, not a second one.
 * @param {ChatState} state
 * @param {any[]} messages
 * @param {HookBlock[]} [hookBlocks]
 * @param {number} [historySeq]
 * @returns {ChatState}
 */
export function loadHistory(state, messages, hookBlocks = [], historySeq = 0) {
  /** @type {Map<string, HookBlock[]>} */
  const byAnchor = new Map();
  for (const block of hookBlocks) {
    const anchor = block.afterMessageId ?? '';
    if (!byAnchor.has(anchor)) byAnchor.set(anchor, []);
    byAnchor.get(anchor)?.push(block);
  }
  let next = placeHookBlocks({ ...state, historySeq }, byAnchor.get(''));
  for (const message of messages) {
    next = messageEnd(next, { message });
    next = placeHookBlocks(next, byAnchor.get(message.id));
  }
  return next;
}

/**
 * The steps of an ended task's card rebuilt from its subagent's messages (`session/messages`
 * of the child session), as a reopened chat has no live events of the child: its replies and
 * its tool calls, each with how it ended, as the live card showed them.
 * @param {ChatState} state @param {string} taskKey @param {Message[]} messages @returns {ChatState}
 */
export function loadChildSteps(state, taskKey, messages) {
  const tool = find(state, taskKey);
  if (!tool || tool.kind !== 'tool' || tool.details?.type !== 'task') return state;
  const { childSessionId, agent, description } = tool.details;
  /** @type {Record<string, 'done' | 'error'>} */
  const ended = {};
  for (const m of messages) if (m.role === 'tool_result') ended[m.toolCallId] = m.isError ? 'error' : 'done';
  let child = { sessionId: childSessionId, agent, description, steps: /** @type {ChildStep[]} */ ([]) };
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    const text = contentText(m.content).trim();
    if (text) child = withStep(child, { key: m.id, kind: 'text', text });
    for (const block of m.content) {
      if (block.type !== 'tool_call') continue;
      const status = ended[block.id] ?? 'error'; // a call with no result never finished
      child = withStep(child, { key: block.id, kind: 'tool', name: block.name, args: block.arguments ?? {}, status });
    }
  }
  return put(state, { ...tool, child });
}

/** @param {ChatState} state @param {HookBlock[]} [blocks] @returns {ChatState} */
function placeHookBlocks(state, blocks = []) {
  let next = state;
  for (const block of blocks) {
    const text = hookBlockText(block.hook);
    next = put(next, { kind: 'notice', key: `hook:${block.entryId}`, level: 'blocked', text, fromHistory: true });
  }
  return next;
}

/** Total usage of the assistant messages shown (each message counted once). */
export function totalUsage(state) {
  const total = { inputTokens: 0, outputTokens: 0, cost: 0 };
  for (const item of state.items) {
    if (item.kind !== 'assistant' || !item.usage) continue;
    total.inputTokens += item.usage.inputTokens ?? 0;
    total.outputTokens += item.usage.outputTokens ?? 0;
    total.cost += item.usage.cost ?? 0;
  }
  return total;
}

/** Tool call ids waiting for the user's approval. */
export function pendingPermissions(state) {
  return state.items.filter((item) => item.kind === 'tool' && item.permission?.pending).map((item) => item.key);
}

// --- item helpers ---------------------------------------------------------------------------

/** @returns {ChatState} with `item` replacing the one of the same key, or appended. */
function put(state, item) {
  const at = state.index[item.key];
  const items = state.items.slice();
  if (at === undefined) {
    items.push(item);
    return { ...state, items, index: { ...state.index, [item.key]: items.length - 1 } };
  }
  items[at] = item;
  return { ...state, items };
}

/** @returns {Item | undefined} */
function find(state, key) {
  const at = state.index[key];
  return at === undefined ? undefined : state.items[at];
}

/** @returns {ToolItem} */
function newTool(key, name) {
  return {
    kind: 'tool', key, name, args: {}, argsText: '', toolKind: 'other', status: 'pending',
    output: '', result: '', details: null, permission: null, locations: [],
  };
}

/** @returns {ChatState} with the tool item `key` changed by `change` (created if missing). */
function updateTool(state, key, name, change) {
  const found = find(state, key);
  const tool = found && found.kind === 'tool' ? found : newTool(key, name);
  return put(state, { ...tool, ...change(tool) });
}

/** A task card keeps at most this many of its subagent's steps (the latest). */
export const MAX_CHILD_STEPS = 50;

/**
 * An event of a subagent's session (a `subagent_start` named it), on the card of the task
 * that started it: its approvals, and its tool calls and finished replies as nested steps;
 * anything else of other sessions is ignored.
 * @param {ChatState} state @param {SessionEventParams} params @returns {ChatState}
 */
function subagentEvent(state, params) {
  const task = (state.children ?? {})[params.sessionId];
  const e = params.event;
  if (!task) return state;
  if (e.type === 'subagent_start') return { ...state, children: { ...state.children, [e.childSessionId]: task } };
  const step = childStep(e);
  if (step) return updateTool(state, task, '', (tool) => (tool.child ? { child: withStep(tool.child, step) } : {}));
  if (e.type === 'permission_request') {
    return updateTool(state, task, '', () => ({
      permission: {
        options: e.options ?? [], pending: true, callId: e.toolCallId, tool: e.tool,
        preview: e.preview ?? null, alwaysRule: e.alwaysRule ?? null,
      },
    }));
  }
  if (e.type === 'question_request') return askedOn(state, task, e);
  if (e.type === 'question_resolved') return questionResolved(state, e);
  if (e.type === 'permission_resolved') {
    return updateTool(state, task, '', (tool) =>
      tool.permission?.callId === e.toolCallId
        ? { permission: { ...tool.permission, pending: false, outcome: e.outcome, reason: e.reason ?? undefined } }
        : {});
  }
  return state;
}

/**
 * A question to the user, on the card `key` (the asking call's, or a card of its own).
 * @param {ChatState} state @param {string} key @param {any} e @returns {ChatState}
 */
function askedOn(state, key, e) {
  const question = {
    questionId: e.questionId, questions: e.questions ?? [], pending: true, url: e.url ?? null, server: e.server ?? null,
  };
  return updateTool(state, key, e.toolCallId ? '' : 'question', () => ({ question }));
}

/** The card whose question was settled, with its answers (or why there are none). */
function questionResolved(/** @type {ChatState} */ state, /** @type {any} */ e) {
  const item = state.items.find((i) => i.kind === 'tool' && i.question?.questionId === e.questionId);
  if (!item || item.kind !== 'tool' || !item.question) return state;
  const question = { ...item.question, pending: false, answers: e.answers ?? null, reason: e.reason ?? undefined };
  return put(state, { ...item, question });
}

/** The nested step a subagent's event makes (or changes), or null. @returns {ChildStep | null} */
function childStep(e) {
  if (e.type === 'tool_execution_start') return { key: e.toolCallId, kind: 'tool', name: e.name, args: e.args ?? {}, status: 'running' };
  if (e.type === 'tool_execution_end') return { key: e.toolCallId, kind: 'tool', name: e.name, args: {}, status: e.isError ? 'error' : 'done' };
  const message = e.type === 'message_end' ? e.message : null;
  const text = message?.role === 'assistant' ? contentText(message.content).trim() : '';
  return text ? { key: message.id, kind: 'text', text } : null;
}

/** `child` with `step` added, or merged into the step of the same key (a tool call's end). */
function withStep(child, step) {
  const steps = child.steps ?? [];
  const at = steps.findIndex((s) => s.key === step.key);
  if (at < 0) return { ...child, steps: [...steps, step].slice(-MAX_CHILD_STEPS) };
  const old = steps[at];
  const merged = step.kind === 'tool' && old.kind === 'tool'
    ? { ...old, name: step.name || old.name, status: step.status }
    : step;
  return { ...child, steps: steps.map((s, i) => (i === at ? merged : s)) };
}

function notice(state, level, text, seq) {
  const key = seq > 0 ? `notice:${seq}` : `notice:${text}`;
  return put(state, { kind: 'notice', key, level, text });
}

function contentText(content) {
  return (content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('');
}

/**
 * A retry of the model call: shown on the reply being waited for (its open assistant item) or,
 * before one is open, as the run's retry item; each attempt updates the same one.
 * @param {ChatState} state @param {any} e @param {number} seq @returns {ChatState}
 */
function retryEvent(state, e, seq) {
  /** @type {RetryInfo} */
  const info = { attempt: e.attempt, maxAttempts: e.maxAttempts, delayMs: e.delayMs, error: e.error, waiting: true };
  const open = state.open ? find(state, state.open) : undefined;
  if (open && open.kind === 'assistant' && !state.retryKey) return put(state, { ...open, retry: info });
  const key = state.retryKey ?? `retry:${seq > 0 ? seq : state.items.length}`;
  return { ...put(state, { kind: 'retry', key, ...info }), retryKey: key };
}

/** @param {ChatState} state @returns {ChatState} with the current retry wait (if any) over. */
function endRetry(state) {
  let next = state;
  const open = state.open ? find(state, state.open) : undefined;
  if (open && open.kind === 'assistant' && open.retry) next = put(next, { ...open, retry: null });
  if (!state.retryKey) return next;
  const item = find(next, state.retryKey);
  if (item && item.kind === 'retry') next = put(next, { ...item, waiting: false });
  return { ...next, retryKey: null };
}

/** Whether the last assistant message already shows `message` as its error (a failed run sends
 * the provider's error twice: in the message and as an `error` event; it is shown once). */
function shownAsReplyError(state, message) {
  for (let i = state.items.length - 1; i >= 0; i -= 1) {
    const item = state.items[i];
    if (item.kind === 'assistant') return item.error === message;
  }
  return false;
}

// --- event handlers -------------------------------------------------------------------------

function messageStart(state, event) {
  if (event.role === 'assistant') {
    // A message already complete (history, then a replay of its events) stays as it is:
    // it becomes `open` so that its replayed deltas are recognised and skipped.
    const existing = find(state, event.messageId);
    const item = existing ?? { kind: 'assistant', key: event.messageId, blocks: [], streaming: true };
    return { ...put(endRetry(state), item), open: event.messageId };
  }
  if (event.role === 'user' && !find(state, event.messageId)) {
    return put(state, { kind: 'user', key: event.messageId, text: '', images: [] });
  }
  return state;
}

/** @returns {[ChatState, AssistantItem]} the state with an open assistant item, and that item. */
function openAssistant(state) {
  if (state.open) {
    const item = find(state, state.open);
    if (item && item.kind === 'assistant') return [state, item];
  }
  // Deltas of a message whose start was not seen (the replay buffer no longer reached it).
  const key = `partial:${state.lastSeq}`;
  /** @type {AssistantItem} */
  const item = { kind: 'assistant', key, blocks: [], streaming: true };
  return [{ ...put(state, item), open: key }, item];
}

function messageUpdate(state, event) {
  const delta = event.delta;
  const [withOpen, item] = openAssistant(endRetry(state));
  if (!item.streaming) return state; // a replayed delta of a message shown complete
  const index = delta.index ?? 0;
  if (delta.type === 'text_delta' || delta.type === 'thinking_delta') {
    const type = delta.type === 'text_delta' ? 'text' : 'thinking';
    const blocks = item.blocks.slice();
    const block = blocks[index];
    blocks[index] = block && block.type === type ? { type, text: block.text + delta.text } : { type, text: delta.text };
    return put(withOpen, { ...item, blocks });
  }
  if (delta.type === 'toolcall_start') {
    const withTool = updateTool(withOpen, delta.id, delta.name, () => ({ name: delta.name }));
    return { ...withTool, toolByIndex: { ...withOpen.toolByIndex, [index]: delta.id } };
  }
  if (delta.type === 'toolcall_delta') {
    const key = withOpen.toolByIndex[index];
    if (!key) return withOpen;
    return updateTool(withOpen, key, '', (tool) => ({ argsText: tool.argsText + delta.arguments }));
  }
  return withOpen;
}

/** @param {ChatState} state @param {{message: Message}} event @returns {ChatState} */
function messageEnd(state, event) {
  const message = event.message;
  if (message.role === 'user') {
    const images = (message.content ?? []).filter((b) => b.type === 'image').map((b) => ({ data: b.data, mimeType: b.mimeType }));
    /** @type {UserItem} */
    const item = { kind: 'user', key: message.id, text: contentText(message.content), images };
    if (message.command) item.command = message.command;
    return put(state, item);
  }
  if (message.role === 'tool_result') {
    return updateTool(state, message.toolCallId, message.toolName, (tool) => ({
      status: message.isError ? 'error' : 'done',
      result: contentText(message.content) || tool.result,
      details: message.details ?? tool.details,
      // history: the questions it asked (live, their events put them on the card already)
      question: tool.question ?? askedIn(message.toolCallId, message.details),
    }));
  }
  return assistantEnd(state, message);
}

function assistantEnd(state, message) {
  let next = state;
  const openItem = state.open ? find(state, state.open) : undefined;
  const blocks = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text') blocks.push({ type: 'text', text: block.text });
    else if (block.type === 'thinking' && !block.redacted) blocks.push({ type: 'thinking', text: block.thinking });
  }
  const item = {
    kind: 'assistant', key: message.id, blocks, streaming: false, stopReason: message.stopReason,
    error: message.errorMessage ?? undefined, usage: message.usage, model: message.model,
    sources: citedSources(message.content ?? []),
  };
  if (openItem && openItem.key !== message.id && find(state, message.id) === undefined) {
    // The streamed item was keyed provisionally: give it the message's id in place.
    const at = state.index[openItem.key];
    const items = state.items.slice();
    items[at] = item;
    const index = { ...state.index, [message.id]: at };
    delete index[openItem.key];
    next = { ...state, items, index };
  } else {
    next = put(state, item);
  }
  for (const block of message.content ?? []) {
    if (block.type === 'server_tool_call') next = serverToolEnd(next, block);
    if (block.type !== 'tool_call') continue;
    next = updateTool(next, block.id, block.name, () => ({ name: block.name, args: block.arguments ?? {} }));
  }
  return { ...next, open: null, toolByIndex: {} };
}

/** The pages the text blocks cite, each URL once, in the order first cited. */
function citedSources(content) {
  const seen = new Map();
  for (const block of content) {
    if (block.type !== 'text') continue;
    for (const cite of block.citations ?? []) if (!seen.has(cite.url)) seen.set(cite.url, { url: cite.url, title: cite.title ?? '' });
  }
  return [...seen.values()];
}

/** A call the provider ran on its side (its web search): a finished tool card, as its events showed it. */
function serverToolEnd(state, block) {
  return updateTool(state, block.id, block.name, () => ({
    name: block.name, args: block.arguments ?? {}, toolKind: 'search',
    status: block.isError ? 'error' : 'done', result: block.result ?? '', details: block.details ?? null,
  }));
}

/** @type {Record<string, (state: ChatState, event: any, seq: number) => ChatState>} */
const HANDLERS = {
  agent_start: (state) => ({ ...endRetry(state), running: true, lastRun: null }),
  message_start: messageStart,
  message_update: messageUpdate,
  message_end: messageEnd,
  tool_execution_start: (state, e) =>
    updateTool(state, e.toolCallId, e.name, (tool) => ({
      name: e.name, args: e.args ?? tool.args, toolKind: e.kind ?? 'other', locations: e.locations ?? tool.locations,
      status: tool.status === 'done' || tool.status === 'error' ? tool.status : 'running',
    })),
  tool_execution_update: (state, e) =>
    updateTool(state, e.toolCallId, '', (tool) => ({ output: tool.output + e.output })),
  tool_execution_end: (state, /** @type {ToolExecutionEnd} */ e) =>
    updateTool(state, e.toolCallId, e.name, () => ({
      status: e.isError ? 'error' : 'done', result: contentText(e.result), details: e.details ?? null,
    })),
  agent_end: (state, e) => {
    let next = endRetry(state);
    if (state.open) {
      const item = find(state, state.open);
      if (item && item.kind === 'assistant') next = put(state, { ...item, streaming: false });
    }
    for (const key of pendingPermissions(next)) {
      next = updateTool(next, key, '', (tool) => ({ permission: { ...tool.permission, pending: false } }));
    }
    for (const item of next.items) {
      if (item.kind === 'tool' && item.question?.pending) next = put(next, { ...item, question: { ...item.question, pending: false } });
    }
    const lastRun = { stopReason: e.stopReason, turns: e.turns ?? 0, cost: e.cost ?? 0, error: e.error ?? null };
    return { ...next, running: false, open: null, lastRun, queue: { steering: [], followUp: [] } };
  },
  subagent_start: (state, e) => ({
    ...updateTool(state, e.toolCallId, 'task', (tool) => ({
      child: { ...tool.child, sessionId: e.childSessionId, agent: e.agent, description: e.description ?? '' },
    })),
    children: { ...state.children, [e.childSessionId]: e.toolCallId },
  }),
  retry: retryEvent,
  plan_update: (state, e) => ({ ...state, plan: e.entries ?? [] }),
  ...processHandlers,
  queue_update: (state, e) => ({ ...state, queue: { steering: e.steering ?? [], followUp: e.followUp ?? [] } }),
  error: (state, e, seq) => (shownAsReplyError(state, e.message) ? state : notice(state, 'error', e.message, seq)),
  permission_request: (state, e) =>
    updateTool(state, e.toolCallId, e.tool, (tool) => ({
      name: e.tool, args: e.args ?? tool.args,
      permission: { options: e.options ?? [], pending: true, preview: e.preview ?? null, alwaysRule: e.alwaysRule ?? null },
    })),
  permission_resolved: (state, e) =>
    updateTool(state, e.toolCallId, '', (tool) => ({
      permission: { options: tool.permission?.options ?? [], pending: false, outcome: e.outcome, reason: e.reason ?? undefined },
    })),
  question_request: (state, e) => askedOn(state, e.toolCallId ?? `question:${e.questionId}`, e),
  question_resolved: questionResolved,
  compaction_start: (state, e, seq) => notice(state, 'info', `Compacting the conversation (${e.reason})…`, seq),
  compaction_end: (state, e, seq) =>
    notice(state, e.error ? 'error' : 'info', e.error ? `Compaction failed: ${e.error}` : 'Older messages were summarised.', seq),
  session_warning: (state, e, seq) =>
    notice(state, 'warning', e.line ? `Session file line ${e.line}: ${e.message}` : e.message, seq),
  // A hook's block is a card of its own; a failed hook also sent a session_warning.
  hook_result: (state, /** @type {HookResult} */ e, seq) =>
    e.decision === 'block' ? hookBlocked(state, hookBlockText(e), seq) : state,
};

/**
 * A hook's block as a card, unless it is the replay of one the history placed already (its
 * seq not after the history's, the same text, not matched before).
 * @param {ChatState} state @param {string} text @param {number} seq @returns {ChatState}
 */
function hookBlocked(state, text, seq) {
  const placed = seq > 0 && seq <= state.historySeq
    ? state.items.find((item) => item.kind === 'notice' && item.fromHistory && item.text === text)
    : undefined;
  return placed ? put(state, { ...placed, fromHistory: false }) : notice(state, 'blocked', text, seq);
}

/** "⊘ pre_tool hook blocked bash: <reason> (scripts/policy-check)". @param {HookResult} e */
export function hookBlockText(e) {
  const what = e.tool ? ` ${e.tool}` : e.event === 'user_prompt' ? ' the prompt' : '';
  return `⊘ ${e.event} hook blocked${what}: ${e.reason ?? ''} (${e.command})`;
}
