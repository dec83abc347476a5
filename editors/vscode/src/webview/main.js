// The webview's entry point: the shared chat UI (daemon/agentd/web/ui) on the VS Code host.
import { mountChat } from '../../../../daemon/agentd/web/ui/chat.js';
import { showEmptyHint } from '../../../../daemon/agentd/web/ui/emptyhint.js';
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
showHint(root);
Object.assign(globalThis, { agentdChat: chat });
await chat.ready;
document.documentElement.dataset.ready = 'true';

/**
 * While the conversation is empty, a hint above it says what to do: type a request, pick the
 * model, send a selection from an editor, and the shortcut back to the chat.
 * @param {HTMLElement} chatRoot
 */
function showHint(chatRoot) {
  const mac = /Mac/.test(navigator.platform);
  showEmptyHint(chatRoot, [
    'Ask agentd to do something in this workspace: type it below and press Enter.',
    'Choose the model in the list at the top. In an editor, select code and run \u201cagentd: Send Selection\u201d.',
    `${mac ? '\u2318\u2325A' : 'Ctrl+Alt+A'} brings you back here.`,
  ]);
}
