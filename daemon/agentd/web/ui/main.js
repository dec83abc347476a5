// The web page's entry point: the chat on the HTTP host. The URL's `#session=ID` names the open
// session (so a reload reopens it and catches up); `?cwd=DIR` is where new sessions start.

import { mountChat } from './chat.js';
import { createHttpHost } from './host-http.js';

const root = /** @type {HTMLElement} */ (document.getElementById('app'));

function sessionFromHash() {
  const match = /^#session=([^&]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

try {
  const host = await createHttpHost();
  const cwd = new URLSearchParams(location.search).get('cwd') ?? host.cwd;
  const chat = mountChat(root, host, {
    sessionId: sessionFromHash(),
    cwd,
    onSessionChange(sessionId) {
      const hash = sessionId ? `#session=${encodeURIComponent(sessionId)}` : '';
      history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
    },
  });
  Object.assign(globalThis, { agentdChat: chat });
  await chat.ready;
  performance.mark('agentd-ready');
  document.documentElement.dataset.ready = 'true';
} catch (error) {
  root.textContent = `Cannot reach agentd: ${error instanceof Error ? error.message : error}`;
  root.setAttribute('role', 'alert');
  document.documentElement.dataset.ready = 'error';
}
