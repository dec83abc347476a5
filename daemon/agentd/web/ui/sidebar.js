// @ts-check
// The session list: sessions grouped by project (the folder's name, its full path on hover),
// newest group first, a subagent's session indented under its parent's; a filter box (title, folder or id); on a narrow screen the list is a
// drawer opened by the header's menu button and closed by a choice, the backdrop or Esc.


/**
 * @typedef {{sessionId: string, title?: string | null, cwd: string, updatedAt: string,
 *   running?: boolean, parentSessionId?: string | null}} SessionSummary
 * @typedef {{project: string, sessions: SessionSummary[], depths: Map<string, number>}} ProjectGroup
 */

/**
 * `sessions` (newest first) grouped by `cwd`, in order of each project's newest session,
 * keeping only those matching `filter` (case-insensitive, in the title, the path or the id).
 * Within a group a subagent's session comes right after its parent's (`depths`: how many
 * levels under it; a child whose parent is not in the group stays where it was).
 * @param {SessionSummary[]} sessions
 * @param {string} [filter]
 * @returns {ProjectGroup[]}
 */
export function groupSessions(sessions, filter = '') {
  const needle = filter.trim().toLowerCase();
  /** @type {Map<string, SessionSummary[]>} */
  const groups = new Map();
  for (const info of sessions) {
    const haystack = `${info.title ?? ''}\n${info.cwd}\n${info.sessionId}`.toLowerCase();
    if (needle && !haystack.includes(needle)) continue;
    const list = groups.get(info.cwd) ?? [];
    list.push(info);
    groups.set(info.cwd, list);
  }
  return [...groups].map(([project, list]) => treeOrder(project, list));
}

/**
 * One project's sessions with each child placed after its parent, and their depths.
 * @param {string} project @param {SessionSummary[]} list @returns {ProjectGroup}
 */
function treeOrder(project, list) {
  const present = new Set(list.map((info) => info.sessionId));
  const parentOf = (info) => (info.parentSessionId && present.has(info.parentSessionId) ? info.parentSessionId : null);
  /** @type {Map<string, SessionSummary[]>} */
  const children = new Map();
  for (const info of list) {
    const parent = parentOf(info);
    if (parent) children.set(parent, [...(children.get(parent) ?? []), info]);
  }
  /** @type {SessionSummary[]} */
  const sessions = [];
  /** @type {Map<string, number>} */
  const depths = new Map();
  const visit = (info, depth) => {
    if (depths.has(info.sessionId)) return; // listed once, even if parent links loop
    depths.set(info.sessionId, depth);
    sessions.push(info);
    for (const child of children.get(info.sessionId) ?? []) visit(child, depth + 1);
  };
  for (const info of list) if (!parentOf(info)) visit(info, 0);
  for (const info of list) visit(info, 0); // a loop of parent links has no top: shown flat
  return { project, sessions, depths };
}

/**
 * Build the sidebar's filter box and drawer behaviour. `onFilter` is called with each change of
 * the filter text.
 * @param {HTMLElement} root the chat's root (gets `drawer-open` while the drawer shows)
 * @param {HTMLElement} sidebar
 * @param {() => void} onFilter
 */
export function buildSidebar(root, sidebar, onFilter) {
  const filter = /** @type {HTMLInputElement} */ (el('input', 'session-filter'));
  filter.type = 'search';
  filter.placeholder = 'Filter sessions';
  filter.setAttribute('aria-label', 'Filter sessions');
  filter.addEventListener('input', onFilter);
  const list = el('div', 'session-groups');
  const backdrop = el('div', 'drawer-backdrop');
  const menu = /** @type {HTMLButtonElement} */ (el('button', 'btn menu-button', '☰'));
  menu.type = 'button';
  menu.setAttribute('aria-label', 'Sessions');
  menu.setAttribute('aria-expanded', 'false');
  const setOpen = (open) => {
    root.classList.toggle('drawer-open', open);
    menu.setAttribute('aria-expanded', String(open));
    if (open) filter.focus();
  };
  menu.addEventListener('click', () => setOpen(!root.classList.contains('drawer-open')));
  backdrop.addEventListener('click', () => setOpen(false));
  root.ownerDocument.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && root.classList.contains('drawer-open')) setOpen(false);
  });
  sidebar.after(backdrop);
  return { filter, list, menu, closeDrawer: () => setOpen(false) };
}

/**
 * Render `sessions` into `list` as project groups.
 * @param {HTMLElement} list
 * @param {SessionSummary[]} sessions
 * @param {string} filter
 * @param {string | undefined} current the open session
 * @param {{openSession: (id: string) => void, deleteSession: (id: string) => void}} actions
 */
export function renderSessionGroups(list, sessions, filter, current, actions) {
  const groups = groupSessions(sessions, filter);
  list.replaceChildren();
  if (!groups.length) {
    list.append(el('p', 'session-empty', sessions.length ? 'No session matches.' : 'No sessions yet.'));
    return;
  }
  for (const group of groups) {
    const section = el('section', 'session-group');
    const heading = el('h2', 'session-project', basename(group.project));
    heading.title = group.project;
    const items = el('ul', 'session-list');
    items.setAttribute('aria-label', group.project);
    for (const info of group.sessions) {
      const row = sessionRow(info, info.sessionId === current, actions);
      const depth = group.depths.get(info.sessionId) ?? 0;
      if (depth > 0) {
        row.classList.add('session--child');
        row.style.setProperty('--depth', String(depth));
      }
      items.appendChild(row);
    }
    section.append(heading, items);
    list.appendChild(section);
  }
}

function sessionRow(info, isCurrent, actions) {
  const row = el('li', `session${isCurrent ? ' session--current' : ''}`);
  const open = /** @type {HTMLButtonElement} */ (el('button', 'session-open'));
  open.type = 'button';
  open.title = `${info.title || info.sessionId}\n${info.cwd}`;
  open.addEventListener('click', () => actions.openSession(info.sessionId));
  if (isCurrent) open.setAttribute('aria-current', 'page');
  open.append(
    el('span', 'session-title', info.title || info.sessionId),
    el('span', 'session-meta', `${when(info.updatedAt)}${info.running ? ' · running' : ''}`),
  );
  const remove = /** @type {HTMLButtonElement} */ (el('button', 'session-delete', '×'));
  remove.type = 'button';
  remove.setAttribute('aria-label', `Delete session ${info.title || info.sessionId}`);
  remove.addEventListener('click', () => actions.deleteSession(info.sessionId));
  row.append(open, remove);
  return row;
}

/** @param {string} tag @param {string} className @param {string} [text] @returns {HTMLElement} */
function el(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** @param {string} path */
export function basename(path) {
  return path.replace(/\/+$/, '').split('/').pop() || path;
}

const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const DAY = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const today = new Date().toDateString() === date.toDateString();
  return (today ? TIME : DAY).format(date);
}
