// The bundled extension activated on a stub `vscode` module: activation registers everything
// and spawns nothing; Restricted Mode starts sessions read-only (against the real daemon).
import assert from 'node:assert/strict';
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
