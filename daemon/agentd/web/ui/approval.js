// @ts-check
// The approval card of a tool call waiting for the user: what the call would do (the daemon's
// `preview`: a diff, a command and its directory, a URL, an MCP call), then the choices.
// "Allow" and "Reject" are the main buttons; the "always" choices are quieter, name the
// rule they add (`alwaysRule`) and how long it lasts: this session, or (`allow_always_project`)
// also later sessions in this folder, kept in the user's config.

/** @typedef {import('./protocol').ApprovalPreview} ApprovalPreview */

/**
 * @param {string} tag @param {string} className @param {string} [text]
 * @returns {HTMLElement}
 */
function el(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Lines of a diff put into the page at once; the rest follows after the first paint. */
const FIRST_LINES = 150;
/** Lines added per later task (each a short main-thread task). */
const LATER_LINES = 1_000;

/** One diff line as a coloured span (added, removed, hunk header, context). */
function diffLine(/** @type {string} */ line) {
  const kind = line.startsWith('+') && !line.startsWith('+++') ? 'add'
    : line.startsWith('-') && !line.startsWith('---') ? 'del'
    : line.startsWith('@@') ? 'hunk' : 'ctx';
  return el('span', `diff-${kind}`, `${line}\n`);
}

/**
 * Lines of a unified diff as coloured spans in `pre`. `progressive`: the first
 * {@link FIRST_LINES} lines now (what the box shows), the rest in later tasks, so a long
 * diff is on screen in the next frame.
 * @param {HTMLElement} pre @param {string} diff @param {boolean} [progressive]
 */
export function fillDiff(pre, diff, progressive = false) {
  const lines = diff.replace(/\n$/, '').split('\n');
  const now = progressive ? FIRST_LINES : lines.length;
  pre.replaceChildren(...lines.slice(0, now).map(diffLine));
  const fill = pre.dataset.fill = String(Number(pre.dataset.fill ?? 0) + 1);
  const more = (/** @type {number} */ from) => {
    if (from >= lines.length || pre.dataset.fill !== fill) return;
    pre.append(...lines.slice(from, from + LATER_LINES).map(diffLine));
    setTimeout(() => more(from + LATER_LINES), 0);
  };
  requestAnimationFrame(() => setTimeout(() => more(now), 0)); // after the first paint
}

/** "+3 −1", "new file, 12 lines" for the file line of a diff preview. */
function changeSize(/** @type {ApprovalPreview} */ preview) {
  if (preview.created) return `new file, ${preview.added ?? 0} line${preview.added === 1 ? '' : 's'}`;
  if (preview.added == null) return '';
  return `+${preview.added} \u2212${preview.removed ?? 0}`;
}

/** The preview's DOM (nothing for a call without one). @returns {HTMLElement[]} */
export function previewNodes(/** @type {ApprovalPreview | null | undefined} */ preview) {
  if (!preview) return [];
  if (preview.kind === 'command') {
    const command = el('pre', 'approval-command', `$ ${preview.command ?? ''}`);
    const cwd = el('div', 'approval-meta');
    cwd.append('in ', el('code', 'approval-cwd', preview.cwd ?? ''));
    return [command, cwd];
  }
  if (preview.kind === 'url') {
    const line = el('div', 'approval-meta');
    line.append('fetch ', el('code', 'approval-url', preview.url ?? ''));
    return [line];
  }
  if (preview.kind === 'mcp') {
    const line = el('div', 'approval-meta');
    line.append('MCP server ', el('code', 'approval-server', preview.server ?? ''), ' \u00b7 tool ', el('code', 'approval-mcp-tool', preview.tool ?? ''));
    return [line, el('pre', 'approval-arguments', JSON.stringify(preview.arguments ?? {}, null, 2))];
  }
  return diffNodes(preview);
}

/** @returns {HTMLElement[]} */
function diffNodes(/** @type {ApprovalPreview} */ preview) {
  const file = el('div', 'approval-meta approval-file');
  file.append(el('code', 'approval-path', preview.path ?? ''));
  const size = changeSize(preview);
  if (size) file.append(' ', el('span', 'approval-size', size));
  const nodes = [file];
  if (preview.error) nodes.push(el('div', 'approval-error', `This call would fail: ${preview.error}`));
  if (preview.diff) {
    const pre = el('pre', 'approval-diff');
    pre.tabIndex = 0;
    fillDiff(pre, preview.diff.replace(/^--- .*\n\+\+\+ .*\n/, ''), true); // the path is above
    nodes.push(pre);
  }
  if (preview.truncated) {
    const why = preview.created ? 'Only the first lines of the new file are shown.' : 'The change is too long to show whole.';
    nodes.push(el('div', 'approval-note', why));
  }
  return nodes;
}

const MAIN_LABELS = { allow_once: 'Allow', reject_once: 'Reject' };
const ALWAYS_LABELS = {
  allow_always: 'Always allow this session',
  allow_always_project: 'Always allow in this project',
  reject_always: 'Always reject this session',
};

/**
 * What an "always" button does, and for how long. @param {string} option @param {string} rule
 */
function alwaysTitle(option, rule) {
  if (option === 'allow_always_project') {
    return `Adds the rule ${rule} for this session and saves it in your config for this folder `
      + '([[project_rules]]): later sessions here allow matching calls without asking too.';
  }
  const verb = option === 'allow_always' ? 'allows' : 'refuses';
  return `Adds the rule ${rule} for this session: it ${verb} matching calls without asking.`;
}

/**
 * One button per option: "Allow" (primary) and "Reject" first, then the quieter "always"
 * choices, each naming the rule it adds.
 * @param {string[]} options @param {string | null | undefined} rule
 * @param {(option: string) => void} answer @returns {HTMLElement}
 */
export function choiceNodes(options, rule, answer) {
  const row = el('div', 'approval-choices');
  const always = el('div', 'approval-always');
  for (const option of options) {
    const main = MAIN_LABELS[option];
    const label = main ?? `${ALWAYS_LABELS[option] ?? option}${rule ? ` \u00b7 ${rule}` : ''}`;
    const kind = main ? (option === 'allow_once' ? 'btn btn--primary' : 'btn btn--danger') : 'btn btn--quiet';
    const button = /** @type {HTMLButtonElement} */ (el('button', kind, label));
    button.type = 'button';
    button.dataset.option = option;
    if (!main && rule) button.title = alwaysTitle(option, rule);
    button.addEventListener('click', () => answer(option));
    (main ? row : always).appendChild(button);
  }
  if (always.childElementCount) row.appendChild(always);
  return row;
}
