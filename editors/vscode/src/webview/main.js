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
Object.assign(globalThis, { agentdChat: chat });
await chat.ready;
document.documentElement.dataset.ready = 'true';
