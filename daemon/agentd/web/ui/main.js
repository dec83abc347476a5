// @ts-check
// The web page's entry point: the chat on the HTTP host. The URL's `#session=ID` names the open
// session (so a reload reopens it and catches up); `?cwd=DIR` is where new sessions start.
// Signing in ends on `/#key=K`: the page key moves to this tab's sessionStorage (never a cookie,
// which every server on this host would receive) and leaves the address bar.

import { mountChat } from './chat.js';
import { showEmptyHint } from './emptyhint.js';
import { createHttpHost } from './host-http.js';

const KEY = 'agentd-key';
const SIGN_IN = 'Run `agentctl web` (or open the link agentd printed) to sign in.';
const root = /** @type {HTMLElement} */ (document.getElementById('app'));

function takeKey() {
  const match = /^#key=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(KEY, match[1]);
    history.replaceState(null, '', `${location.pathname}${location.search}`);
  }
  return sessionStorage.getItem(KEY);
}

function sessionFromHash() {
  const match = /^#session=([^&]+)/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

function stop(message, state) {
  root.textContent = message;
  root.setAttribute('role', 'alert');
  document.documentElement.dataset.ready = state;
}

try {
  const key = takeKey();
  if (!key) {
    stop(`This tab is not signed in to agentd. ${SIGN_IN}`, 'signed-out');
  } else {
    const host = await createHttpHost({ key, onSignedOut: () => sessionStorage.removeItem(KEY) });
    const cwd = new URLSearchParams(location.search).get('cwd') ?? host.cwd;
    const chat = mountChat(root, host, {
      sessionId: sessionFromHash(),
      cwd,
      onSessionChange(sessionId) {
        const hash = sessionId ? `#session=${encodeURIComponent(sessionId)}` : '';
        history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
      },
    });
    showEmptyHint(root, [
      `Ask agentd to do something${cwd ? ` in ${cwd}` : ''}: type it below and press Enter (Shift+Enter for a new line).`,
      'Choose the model in the list at the top. Add images with \u201cAdd image\u201d, or paste or drop them. Type / for commands.',
      'Your earlier chats are in the session list (the \u2630 button on a narrow screen).',
    ]);
    Object.assign(globalThis, { agentdChat: chat });
    await chat.ready;
    performance.mark('agentd-ready');
    document.documentElement.dataset.ready = 'true';
  }
} catch (error) {
  const signedOut = error instanceof Error && 'status' in error && error.status === 401;
  if (signedOut) stop(`Signed out of agentd. ${SIGN_IN}`, 'signed-out');
  else stop(`Cannot reach agentd: ${error instanceof Error ? error.message : error}`, 'error');
}
