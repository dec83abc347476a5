// The bundled extension activated on a stub `vscode` module: activation registers everything
// and spawns nothing; Restricted Mode starts sessions read-only (against the real daemon).
import assert from 'node:assert/strict';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { context, loadExtension, stub } from './extension-host.mjs';
import { tempHome, venvBin } from './helpers.mjs';

const home = tempHome();
stub.folders = [home.project];
stub.settings = {
  connection: 'stdio',
  command: join(venvBin, 'agentd'),
  provider: 'mock',
  permissionMode: 'ask',
  extraArgs: ['--session-dir', home.sessions],
};
const { extension } = loadExtension();
const ctx = context();
const { controller } = extension.activate(ctx);

after(async () => {
  for (const item of ctx.subscriptions) await item.dispose();
  home.cleanup();
});

test('activation registers the commands, the chat view and the status bar, and spawns nothing', () => {
  const commands = [...stub.registered.commands.keys()].sort();
  assert.deepEqual(commands, [
    'agentd.cancel', 'agentd.fixProblems', 'agentd.newSession', 'agentd.openSession',
    'agentd.sendPrompt', 'agentd.sendSelection', 'agentd.showLog',
  ]);
  assert.ok(stub.registered.views.has('agentd.chat'));
  assert.equal(stub.registered.statusItems[0].text, '$(hubot) agentd');
  assert.equal(controller.client.state, 'stopped');
  assert.equal(controller.client.pid, undefined);
});

test('session/new takes provider and permission mode from the settings', async () => {
  stub.trusted = true;
  const info = await controller.request('session/new', { cwd: home.project });
  assert.equal(info.provider, 'mock');
  assert.equal(info.permissionMode, 'ask');
});

test('Restricted Mode (an untrusted workspace) starts sessions read-only', async () => {
  stub.trusted = false;
  const info = await controller.request('session/new', { cwd: home.project, permissionMode: 'auto' });
  assert.equal(info.permissionMode, 'read-only');
  stub.trusted = true;
});

test('the status bar follows the shown session: running, approval, idle', () => {
  const item = stub.registered.statusItems[0];
  controller.currentSession = 's1';
  const event = (type, extra = {}) => ({ sessionId: 's1', seq: 1, event: { type, ...extra } });
  controller.status.onEvent(event('agent_start'), 's1');
  assert.match(item.text, /sync~spin/);
  controller.status.onEvent(event('permission_request', { toolCallId: 'c1' }), 's1');
  assert.match(item.text, /approve/);
  controller.status.onEvent(event('permission_resolved', { toolCallId: 'c1' }), 's1');
  assert.match(item.text, /sync~spin/);
  controller.status.onEvent({ ...event('agent_start'), sessionId: 'other' }, 's1');
  controller.status.onEvent(event('agent_end'), 's1');
  assert.equal(item.text, '$(hubot) agentd');
});

/** The chat view resolved on a stand-in webview; `send` delivers a message from the webview. */
function openChat() {
  const posted = [];
  let receive = null;
  const view = {
    visible: true,
    webview: {
      options: {},
      cspSource: 'https://webview.test',
      html: '',
      asWebviewUri: (uri) => `https://webview.test${uri.path}`,
      onDidReceiveMessage: (listener) => (receive = listener),
      postMessage: async (message) => posted.push(message),
    },
    onDidChangeVisibility() {},
    onDidDispose() {},
  };
  stub.registered.views.get('agentd.chat').resolveWebviewView(view);
  receive({ type: 'ready' });
  const answer = async (id) => {
    for (let i = 0; i < 1000; i++) {
      const found = posted.find((m) => m.type === 'response' && m.id === id);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no response ${id}`);
  };
  const call = (id, method, params) => (receive({ type: 'request', id, method, params }), answer(id));
  return { view, call };
}

test('the chat webview may call only the chat methods, and not set the permission mode', async () => {
  const { call } = openChat();
  const created = await call(1, 'session/new', { cwd: home.project, permissionMode: 'auto', providerEnv: { OPENAI_API_KEY: 'sk-x' } });
  assert.equal(created.result.permissionMode, 'ask');
  const sessionId = created.result.sessionId;
  const pid = controller.client.pid;
  const escalate = await call(2, 'session/setPermissionMode', { sessionId, mode: 'auto' });
  assert.equal(escalate.error.code, -32601);
  assert.match(escalate.error.message, /may not call session\/setPermissionMode/);
  const stop = await call(3, 'shutdown', {});
  assert.match(stop.error.message, /may not call shutdown/);
  const state = await call(4, 'session/state', { sessionId });
  assert.equal(state.result.permissionMode, 'ask');
  // a session file named by the page is not loaded: the path is dropped, the id is used
  const loaded = await call(5, 'session/load', { sessionId, path: '/etc/passwd' });
  assert.equal(loaded.result.session.sessionId, sessionId);
  assert.equal(controller.client.pid, pid);
});

test('the webview CSP allows no inline style or script', () => {
  const { view } = openChat();
  const csp = /Content-Security-Policy" content="([^"]+)"/.exec(view.webview.html)[1];
  assert.match(csp, /style-src https:\/\/webview\.test(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.match(csp, /script-src 'nonce-[^']+'(;|$)/);
});

test('the chat webview cannot name MCP servers (command lines) nor a cwd outside the workspace', async () => {
  const { call } = openChat();
  const mark = join(home.root, 'PLANTED');
  const planted = [{ name: 'planted', command: '/bin/sh', args: ['-c', `touch ${mark}; sleep 30`] }];
  const project = realpathSync(home.project);
  for (const [id, cwd] of [[11, '/'], [12, process.env.HOME ?? '/root'], [13, join(home.project, '..')]]) {
    const created = await call(id, 'session/new', { cwd, mcpServers: planted });
    assert.equal(created.result.cwd, project, `cwd ${cwd} was pinned to the workspace folder`);
    assert.deepEqual((created.result.mcpServers ?? []).map((server) => server.name), []);
  }
  const inside = await call(14, 'session/new', { cwd: home.project });
  assert.equal(inside.result.cwd, project);
  const sessionId = inside.result.sessionId;
  const loaded = await call(15, 'session/load', { sessionId, mcpServers: planted });
  assert.deepEqual((loaded.result.session.mcpServers ?? []).map((server) => server.name), []);
  const ran = await call(16, 'session/prompt', { sessionId, text: 'hello' });
  assert.ok(ran.result);
  assert.equal(existsSync(mark), false);
});
