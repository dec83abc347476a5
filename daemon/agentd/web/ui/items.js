// @ts-check
// DOM for the chat log's items (see reducer.js for their shape). Each function builds or
// updates one element in place; nothing here keeps state beyond the element it is given.

import { choiceNodes, fillDiff, previewNodes } from './approval.js';
import { enhanceCode } from './code.js';
import { changeDiff, exitCode, fileChange, mcpTool, subagent } from './details.js';
import { showFoldable } from './longtext.js';
import { renderMarkdown } from './markdown.js';
import { settledLength } from './mdsplit.js';
import { changeProblems, updateProblems } from './problems.js';
import { updateQuestion } from './question.js';

/** Streaming tails longer than this are shown as plain text until the message ends. */
const PLAIN_TAIL_CHARS = 16_384;
/** Markdown rendered per text block and frame at most; a backlog (a page that fell behind, a
 * long reply opened from history) follows in the next frames, shown as plain text meanwhile. */
const RENDER_CHARS_PER_FRAME = 6_000;

const OUTCOME_TEXT = {
  allow_once: 'allowed',
  allow_always: 'always allowed (this session)',
  allow_always_project: 'always allowed in this project',
  reject_once: 'rejected',
  reject_always: 'always rejected (this session)',
};

/**
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElement}
 */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * A new element for `item`, filled by `updateItem`.
 * @param {import('./reducer.js').Item} item
 */
export function createItem(item) {
  const node = el(item.kind === 'tool' ? 'article' : 'div', `item item--${item.kind}`);
  node.dataset.key = item.key;
  return node;
}

/**
 * Bring `node` up to date with `item`. Returns true when part of it is still to be rendered
 * (call again on the next frame).
 * @param {HTMLElement} node
 * @param {import('./reducer.js').Item} item
 * @param {{answerPermission: (toolCallId: string, outcome: string) => void,
 *   answerQuestion?: (questionId: string, answers: any[] | null) => void,
 *   rewindTo?: (entryId: string) => void,
 *   openDiff?: (item: import('./reducer.js').ToolItem) => void,
 *   openLocation?: (path: string, line?: number | null) => void}} actions
 * @returns {boolean}
 */
export function updateItem(node, item, actions) {
  if (item.kind === 'assistant') return updateAssistant(node, item);
  if (item.kind === 'user') updateUser(node, item, actions);
  else if (item.kind === 'tool') updateTool(node, item, actions);
  else if (item.kind === 'retry') {
    node.className = 'item item--retry';
    updateRetry(node, item);
  }
  else updateNotice(node, item);
  return false;
}

/**
 * The prompt's text and, when the host can rewind, a small "Rewind to here" button (its key
 * is the message's id, which is its entry id in the session file).
 * @param {HTMLElement} node @param {import('./reducer.js').UserItem} item
 * @param {{rewindTo?: (entryId: string) => void}} actions
 */
function updateUser(node, item, actions) {
  node.setAttribute('aria-label', 'You');
  let body = /** @type {HTMLElement | null} */ (node.querySelector(':scope > .user-text'));
  if (!body) {
    body = node.appendChild(el('div', 'user-text'));
    if (actions.rewindTo) {
      // The label is drawn by the style sheet: the message's text (and a copy of it) stays
      // the prompt alone.
      const rewind = /** @type {HTMLButtonElement} */ (el('button', 'rewind-here'));
      rewind.type = 'button';
      rewind.setAttribute('aria-label', 'Rewind to here');
      rewind.title = 'Go back to before this prompt: the conversation and the files changed since';
      rewind.addEventListener('click', () => actions.rewindTo?.(item.key));
      node.appendChild(rewind);
    }
  }
  showSentImages(node, body, item.images ?? []);
  if (!item.command) {
    showFoldable(body, item.text); // a long paste is folded ("Show more")
    return;
  }
  // A custom command: what was typed, and the prompt it became on demand.
  const expansion = el('details', 'user-expansion');
  expansion.append(el('summary', '', 'Expanded prompt'), el('div', 'user-expansion-text', item.text));
  body.replaceChildren(el('div', 'user-command', item.command), expansion);
}

/** The images sent with a prompt, as thumbnails after its text (drawn once: they never change). */
function showSentImages(node, body, images) {
  if (!images.length || node.querySelector(':scope > .user-images')) return;
  const list = el('div', 'user-images');
  list.setAttribute('role', 'list');
  list.setAttribute('aria-label', 'Images sent');
  images.forEach((image, index) => {
    if (!/^image\/(png|jpeg|gif|webp)$/.test(image.mimeType)) return;
    const thumb = /** @type {HTMLImageElement} */ (el('img', 'user-image'));
    thumb.src = `data:${image.mimeType};base64,${image.data}`;
    thumb.alt = `image ${index + 1} of ${images.length}`;
    thumb.setAttribute('role', 'listitem');
    list.appendChild(thumb);
  });
  body.after(list);
}

function updateNotice(node, item) {
  node.className = `item item--notice notice--${item.level}`;
  node.setAttribute('role', item.level === 'error' ? 'alert' : 'status');
  node.textContent = item.text;
}

/**
 * A wait for the model after a failed call (a retry item, or the line of a reply waited for):
 * the error, the next attempt and a countdown to it (ticking while it waits); hidden when over.
 * @param {HTMLElement} node @param {import('./reducer.js').RetryInfo} info
 */
function updateRetry(node, info) {
  node.hidden = !info.waiting;
  node.setAttribute('role', 'status');
  clearInterval(Number(node.dataset.timer ?? 0));
  if (!info.waiting) return;
  const stamp = `${info.attempt}:${info.delayMs}`;
  if (node.dataset.stamp !== stamp) {
    node.dataset.stamp = stamp;
    node.dataset.due = String(Date.now() + info.delayMs);
  }
  const attempt = `attempt ${info.attempt + 1} of ${info.maxAttempts}`;
  const render = () => {
    const left = Math.max(0, Math.ceil((Number(node.dataset.due) - Date.now()) / 1000));
    node.textContent = `↻ ${info.error} — retrying in ${left} s (${attempt})`;
    if (left === 0 || !node.isConnected) clearInterval(Number(node.dataset.timer));
  };
  render();
  node.dataset.timer = String(setInterval(render, 250));
}

// --- assistant messages ---------------------------------------------------------------------

/**
 * @param {HTMLElement} node @param {import('./reducer.js').AssistantItem} item
 * @returns {boolean} whether a backlog is left for the next frame
 */
function updateAssistant(node, item) {
  let behind = false;
  node.classList.toggle('streaming', item.streaming);
  node.setAttribute('aria-label', 'Assistant');
  const parts = /** @type {HTMLElement[]} */ ([...node.children]);
  item.blocks.forEach((block, i) => {
    if (!block) return;
    let part = parts[i];
    if (!part || part.dataset.type !== block.type) {
      const fresh = block.type === 'thinking' ? thinkingPart() : textPart();
      if (part) node.replaceChild(fresh, part);
      else node.appendChild(fresh);
      part = fresh;
    }
    if (block.type === 'thinking') part.querySelector('.thinking-text').textContent = block.text;
    else behind = updateText(part, block.text, item.streaming) || behind;
  });
  updateSources(node, item.sources ?? []);
  let error = node.querySelector(':scope > .msg-error');
  if (item.error && !error) error = node.appendChild(el('div', 'msg-error'));
  if (error) error.textContent = item.error ?? '';
  let retry = /** @type {HTMLElement | null} */ (node.querySelector(':scope > .msg-retry'));
  if (item.retry && !retry) retry = node.appendChild(el('div', 'msg-retry'));
  if (retry) updateRetry(retry, item.retry ?? { attempt: 0, maxAttempts: 0, delayMs: 0, error: '', waiting: false });
  markCancelled(node, item.stopReason === 'aborted' && !behind);
  return behind;
}

/**
 * The pages the reply cites (a provider-side search's results), under its text: links to
 * http(s) URLs only, the title shown (else the URL).
 * @param {HTMLElement} node @param {{url: string, title: string}[]} sources
 */
function updateSources(node, sources) {
  node.querySelector(':scope > .msg-sources')?.remove();
  const safe = sources.filter((source) => /^https?:\/\//i.test(source.url));
  if (safe.length === 0) return;
  const list = el('div', 'msg-sources', 'Sources: ');
  list.setAttribute('aria-label', 'Sources');
  safe.forEach((source, i) => {
    const link = /** @type {HTMLAnchorElement} */ (el('a', '', source.title || source.url));
    link.href = source.url;
    link.title = source.url;
    link.rel = 'noopener noreferrer';
    if (i) list.append(' · ');
    list.append(link);
  });
  node.appendChild(list);
}

/**
 * A cancelled reply says so where its text stopped: a "cancelled" mark after the last word
 * (inside the last paragraph, list item or code block), or alone when no text came.
 * @param {HTMLElement} node @param {boolean} cancelled
 */
function markCancelled(node, cancelled) {
  node.querySelector('.msg-cancelled')?.remove();
  node.classList.toggle('cancelled', cancelled);
  if (!cancelled) return;
  const blocks = node.querySelectorAll('.md p, .md li, .md pre, .md h1, .md h2, .md h3, .md td, .md .md-tail');
  const texts = [...blocks].filter((block) => block.textContent?.trim());
  const last = texts[texts.length - 1];
  const target = last?.tagName === 'PRE' ? last.querySelector('code') ?? last : last ?? node;
  target.appendChild(el('span', 'msg-cancelled', 'cancelled'));
}

function thinkingPart() {
  const part = el('details', 'thinking');
  part.dataset.type = 'thinking';
  part.append(el('summary', '', 'Thinking'), el('div', 'thinking-text'));
  return part;
}

function textPart() {
  const part = el('div', 'md');
  part.dataset.type = 'text';
  part.dataset.settled = '0';
  part.append(el('div', 'md-settled'), el('div', 'md-tail'));
  return part;
}

/**
 * Render settled Markdown blocks once (appended), re-render only the growing tail; at most
 * RENDER_CHARS_PER_FRAME of settled text per call. Returns true when a backlog is left.
 * @param {HTMLElement} part @param {string} text @param {boolean} streaming
 * @returns {boolean}
 */
function updateText(part, text, streaming) {
  const settledEl = /** @type {HTMLElement} */ (part.firstChild);
  const tailEl = /** @type {HTMLElement} */ (part.lastChild);
  let settled = Number(part.dataset.settled);
  if (settled > text.length) {
    settledEl.replaceChildren();
    settled = 0;
  }
  const end = streaming ? settledLength(text, settled) : text.length;
  let cut = end;
  if (end - settled > RENDER_CHARS_PER_FRAME) {
    const limit = settledLength(text.slice(0, settled + RENDER_CHARS_PER_FRAME), settled);
    if (limit > settled) cut = limit; // else one huge block: render it whole
  }
  if (cut > settled) {
    const chunk = el('div', 'md-chunk');
    chunk.innerHTML = renderMarkdown(text.slice(settled, cut));
    enhanceCode(chunk);
    settledEl.appendChild(chunk);
    part.dataset.settled = String(cut);
  }
  const rest = text.slice(cut);
  const behind = cut < end;
  if (behind || rest.length > PLAIN_TAIL_CHARS) tailEl.textContent = rest;
  else tailEl.innerHTML = rest ? renderMarkdown(rest) : '';
  return behind;
}

// --- tool cards -----------------------------------------------------------------------------

/** One line saying what a tool call does, from its (possibly partial) arguments. */
export function toolSummary(item) {
  const args = item.args ?? {};
  // An MCP tool's arguments mean what its server says: all of them are shown.
  if (mcpTool(item.name, item.details)) return Object.keys(args).length ? JSON.stringify(args) : item.argsText;
  if (item.name === 'ask_user' && Array.isArray(args.questions)) {
    return args.questions.map((q) => (q && typeof q === 'object' ? q.header || q.question : '')).join(' · ');
  }
  if (item.name === 'task' && typeof args.description === 'string') {
    return `${args.description} (${typeof args.agent === 'string' ? args.agent : 'general'})`;
  }
  const pick = args.command ?? args.path ?? args.pattern ?? args.file_path;
  if (typeof pick === 'string') return pick;
  if (Object.keys(args).length) return JSON.stringify(args);
  return item.argsText;
}

/** @param {import('./reducer.js').ToolItem} item */
function statusText(item) {
  const permission = item.permission;
  if (permission?.pending) return 'waiting for approval';
  if (item.question?.pending) return 'waiting for your answer';
  if (permission?.outcome?.startsWith('reject')) return OUTCOME_TEXT[permission.outcome];
  const exit = exitCode(item.details);
  if (exit !== null && item.status !== 'running') return exit === 0 ? 'exit 0' : `failed · exit ${exit}`;
  return { pending: 'waiting', running: 'running', done: 'done', error: 'failed' }[item.status];
}

/** @param {HTMLElement} node @param {import('./reducer.js').ToolItem} item */
function updateTool(node, item, actions) {
  const exit = exitCode(item.details);
  const failed = item.status === 'error' || (item.status === 'done' && exit !== null && exit !== 0);
  node.className = `item item--tool tool--${item.status}${failed ? ' tool--failed' : ''}${item.permission?.pending || item.question?.pending ? ' tool--asking' : ''}`;
  node.setAttribute('aria-label', `Tool ${toolTitle(item)}`);
  if (!node.firstChild) buildTool(node);
  // Reading and searching cards start collapsed (their output is for the model); a click on the
  // header toggles any card that has output.
  if (!node.dataset.collapsed && (item.toolKind === 'read' || item.toolKind === 'search')) setCollapsed(node, true);
  updateName(/** @type {HTMLElement} */ (node.querySelector('.tool-name')), item);
  node.querySelector('.tool-summary').textContent = toolSummary(item);
  node.querySelector('.tool-status').textContent = statusText(item);
  updatePermission(node.querySelector('.tool-permission'), item, actions);
  updateQuestion(node.querySelector('.tool-ask'), item.question, (id, answers) => actions.answerQuestion?.(id, answers));
  updateLinks(node.querySelector('.tool-links'), item, actions);
  updateChild(node.querySelector('.tool-child'), item);
  const diff = changeDiff(item.details);
  updateDiff(node.querySelector('.tool-diff'), diff);
  updateProblems(/** @type {HTMLElement} */ (node.querySelector('.tool-problems')), changeProblems(item.details));
  const output = /** @type {HTMLElement} */ (node.querySelector('.tool-output'));
  const text = item.status === 'done' || item.status === 'error' ? item.result || item.output : item.output;
  const shown = diff && item.status === 'done' ? '' : text;
  if (output.textContent !== shown) {
    const follow = output.scrollTop + output.clientHeight >= output.scrollHeight - 4;
    output.textContent = shown;
    if (follow) output.scrollTop = output.scrollHeight;
  }
  output.hidden = !shown;
}

/**
 * How a tool is named to a person: `server › tool` for an MCP tool, else its name.
 * @param {{ name: string, details?: import('./protocol').ToolDetails | null }} item
 */
export function toolTitle(item) {
  const mcp = mcpTool(item.name, item.details);
  return mcp ? `${mcp.server} › ${mcp.tool}` : item.name;
}

/**
 * The card's name: an MCP tool's server (dimmed) and tool, its full name in the tooltip.
 * @param {HTMLElement} box @param {import('./reducer.js').ToolItem} item
 */
function updateName(box, item) {
  const mcp = mcpTool(item.name, item.details);
  const key = mcp ? `${mcp.server}\u0000${mcp.tool}` : item.name;
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.title = mcp ? `${item.name}: tool ${mcp.tool} of MCP server ${mcp.server}` : '';
  if (!mcp) {
    box.textContent = item.name;
    return;
  }
  box.replaceChildren(el('span', 'tool-server', mcp.server), el('span', 'tool-sep', ' › '), el('span', 'tool-tool', mcp.tool));
}

function setCollapsed(node, collapsed) {
  node.dataset.collapsed = String(collapsed);
  node.querySelector('.tool-head').setAttribute('aria-expanded', String(!collapsed));
}

function buildTool(node) {
  const head = el('header', 'tool-head');
  head.append(el('span', 'tool-name'), el('code', 'tool-summary'), el('span', 'tool-status'));
  head.addEventListener('click', () => setCollapsed(node, node.dataset.collapsed !== 'true'));
  const permission = el('div', 'tool-permission');
  permission.setAttribute('role', 'group');
  permission.hidden = true;
  const ask = el('div', 'tool-ask');
  ask.hidden = true;
  const links = el('div', 'tool-links');
  links.hidden = true;
  const child = el('div', 'tool-child');
  child.hidden = true;
  const diff = el('pre', 'tool-diff');
  diff.hidden = true;
  const problems = el('ul', 'tool-problems');
  problems.setAttribute('aria-label', 'New problems');
  problems.hidden = true;
  const output = el('pre', 'tool-output');
  output.tabIndex = 0;
  output.hidden = true;
  node.append(head, permission, ask, links, child, diff, problems, output);
}

/** A task's subagent: its profile and session id (its own session, resumable and listed),
 * then what it did, nested: its tool calls with their state and its replies. */
function updateChild(box, item) {
  const task = subagent(item.details);
  const id = task?.childSessionId ?? item.child?.sessionId;
  box.hidden = typeof id !== 'string';
  if (box.hidden) return;
  if (!box.firstChild) box.append(el('div', 'tool-child-head'), el('ol', 'tool-child-steps'));
  const agent = task?.agent ?? item.child?.agent ?? 'general';
  const count = task?.turns;
  const turns = typeof count === 'number' ? ` · ${count} turn${count === 1 ? '' : 's'}` : '';
  box.firstChild.textContent = `Subagent ${agent} · session ${id}${turns}`;
  box.title = `The subagent's own session: ${id}`;
  const steps = item.child?.steps ?? [];
  const list = /** @type {HTMLElement} */ (box.lastChild);
  list.setAttribute('aria-label', "The subagent's steps");
  list.hidden = !steps.length;
  list.replaceChildren(...steps.map(childStepNode));
}

const CHILD_STATUS = { running: '…', done: '✓', error: '✗' };

/** One nested step: `✓ write child.txt` or the subagent's reply (its first line). */
function childStepNode(step) {
  if (step.kind === 'text') return el('li', 'child-step child-step--text', step.text.split('\n', 1)[0].slice(0, 200));
  const node = el('li', `child-step child-step--tool child-step--${step.status}`);
  const summary = toolSummary(/** @type {any} */ ({ name: step.name, args: step.args, argsText: '' }));
  node.append(el('span', 'child-step-mark', CHILD_STATUS[step.status]), el('span', 'tool-name', step.name), el('code', 'tool-summary', summary));
  return node;
}

/**
 * The card's links, shown only when the host can act on them (an editor): the tool's
 * locations (open the file at the line) and "Open diff" for a finished edit or write.
 * @param {HTMLElement} box @param {import('./reducer.js').ToolItem} item @param {any} actions
 */
function updateLinks(box, item, actions) {
  const locations = actions.openLocation ? item.locations ?? [] : [];
  const canDiff = Boolean(actions.openDiff) && item.status === 'done' && typeof fileChange(item.details)?.diff === 'string';
  const key = JSON.stringify([locations, canDiff]);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren();
  for (const location of locations) {
    const name = location.path.split('/').pop() || location.path;
    const link = /** @type {HTMLButtonElement} */ (
      el('button', 'link tool-location', location.line ? `${name}:${location.line}` : name)
    );
    link.type = 'button';
    link.title = location.path;
    link.addEventListener('click', () => actions.openLocation?.(location.path, location.line));
    box.appendChild(link);
  }
  if (canDiff) {
    const open = /** @type {HTMLButtonElement} */ (el('button', 'btn open-diff', 'Open diff'));
    open.type = 'button';
    open.addEventListener('click', () => actions.openDiff?.(item));
    box.appendChild(open);
  }
  box.hidden = !box.childElementCount;
}

function updatePermission(box, item, actions) {
  const permission = item.permission;
  box.hidden = !permission?.pending;
  if (!permission?.pending) {
    box.replaceChildren();
    return;
  }
  if (box.childElementCount) return;
  const named = toolTitle(permission.tool ? { name: permission.tool } : item);
  box.setAttribute('aria-label', permission.tool ? `Approve the subagent's ${named}?` : `Approve ${named}?`);
  const asking = permission.tool ? `Allow the subagent's ${named}?` : `Allow ${named}?`;
  const question = el('div', 'tool-question', asking);
  const answer = (option) => actions.answerPermission(permission.callId ?? item.key, option);
  box.append(question, ...previewNodes(permission.preview), choiceNodes(permission.options, permission.alwaysRule, answer));
  // Move focus to the question unless the user is in the middle of typing a message.
  const active = /** @type {HTMLElement | null} */ (box.ownerDocument.activeElement);
  const typing = active instanceof HTMLTextAreaElement && active.value !== '';
  if (!typing) /** @type {HTMLElement} */ (box.querySelector('button')).focus();
}

function updateDiff(pre, diff) {
  pre.hidden = !diff;
  if (pre.dataset.diff === diff) return;
  pre.dataset.diff = diff;
  if (diff) fillDiff(pre, diff);
  else pre.replaceChildren();
}
