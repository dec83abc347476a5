// The webview's entry point: the shared chat UI (daemon/agentd/web/ui) on the VS Code host.
import { mountChat } from '../../../../daemon/agentd/web/ui/chat.js';
import { createVsCodeHost } from './host.js';

const root = /** @type {HTMLElement} */ (document.getElementById('app'));
const host = createVsCodeHost();
const { cwd, sessionId } = await host.init;
host.cwd = cwd;
const chat = mountChat(root, host, {
  sessionId,
  cwd,
  sidebar: false,
  confirm: (question) => host.confirm(question),
  onSessionChange: (id) => host.sessionChanged(id),
});
host.onCommand((command) => {
  if (command.name === 'newSession') chat.newSession().catch(() => {});
  else if (command.name === 'openSession' && command.sessionId) chat.openSession(command.sessionId).catch(() => {});
});
showEmptyHint(root);
Object.assign(globalThis, { agentdChat: chat });
await chat.ready;
document.documentElement.dataset.ready = 'true';

/**
 * While the conversation is empty, a hint above it says what to do: type a request, pick the
 * model, send a selection from an editor, and the shortcut back to the chat. Styled with the
 * theme's variables (through the CSSOM: the webview's style policy allows no inline styles).
 * @param {HTMLElement} chatRoot
 */
function showEmptyHint(chatRoot) {
  const log = /** @type {HTMLElement | null} */ (chatRoot.querySelector('.log'));
  if (!log?.parentElement) return;
  const mac = /Mac/.test(navigator.platform);
  const hint = document.createElement('div');
  hint.className = 'empty-hint';
  hint.setAttribute('role', 'note');
  const lines = [
    'Ask agentd to do something in this workspace: type it below and press Enter.',
    'Choose the model in the list at the top. In an editor, select code and run \u201cagentd: Send Selection\u201d.',
    `${mac ? '\u2318\u2325A' : 'Ctrl+Alt+A'} brings you back here.`,
  ];
  for (const text of lines) {
    const line = document.createElement('p');
    line.textContent = text;
    line.style.margin = '0 0 6px';
    hint.appendChild(line);
  }
  Object.assign(hint.style, { padding: '16px', color: 'var(--muted)', fontSize: '13px' });
  log.parentElement.insertBefore(hint, log);
  const update = () => {
    hint.hidden = Boolean(log.querySelector('.item'));
  };
  new MutationObserver(update).observe(log, { childList: true });
  update();
}
