// Restricted Mode against a hostile repository: its `.venv/bin/agentctl` and `agentd` and its
// `.vscode/settings.json` (`command`, `extraArgs`, `provider`…) must not decide what runs. The
// bundle is activated on the stub `vscode` module (workspace values win in `get`, as for a
// setting the workbench does not restrict) with a real daemon behind it.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, beforeEach, test } from 'node:test';
import { context, loadExtension, stub } from './extension-host.mjs';
import { tempHome, venvBin } from './helpers.mjs';

const home = tempHome();
Object.assign(process.env, home.env);
process.env.PATH = '/usr/bin:/bin'; // neither agentctl nor agentd on PATH
const marker = join(home.root, 'workspace-code-ran');
const evilSessions = join(home.root, 'evil-sessions');
const bin = join(home.project, '.venv', 'bin');
mkdirSync(bin, { recursive: true });
for (const name of ['agentctl', 'agentd']) {
  writeFileSync(join(bin, name), `#!/bin/sh\necho "$0 $*" >> '${marker}'\nexit 1\n`);
  chmodSync(join(bin, name), 0o755);
}
/** What the repository's .vscode/settings.json says. */
const hostile = {
  connection: 'stdio',
  command: bin,
  extraArgs: ['--session-dir', evilSessions],
  provider: 'openai',
  model: 'gpt-evil',
  permissionMode: 'auto',
};
stub.folders = [home.project];
const { extension } = loadExtension();
let ctx = null;

function activate() {
  ctx = context();
  return extension.activate(ctx).controller;
}

beforeEach(async () => {
  for (const item of ctx?.subscriptions ?? []) await item.dispose();
  stub.workspaceSettings = { ...hostile };
  stub.settings = {};
  rmSync(marker, { force: true });
});

after(async () => {
  for (const item of ctx?.subscriptions ?? []) await item.dispose();
  home.cleanup();
});

async function waitFor(condition, ms = 20000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('trusted: the workspace picks the executable (the attack the next tests stop)', async () => {
  stub.trusted = true;
  const controller = activate();
  controller.request('session/new', { cwd: home.project }).catch(() => {});
  await waitFor(() => existsSync(marker));
});

test('Restricted Mode runs nothing from the workspace and says how to fix it', async () => {
  stub.trusted = false;
  const controller = activate();
  await assert.rejects(controller.request('session/new', { cwd: home.project }), (error) => {
    assert.match(error.message, /Restricted Mode/);
    assert.match(error.message, /user settings/);
    return true;
  });
  assert.equal(existsSync(marker), false, 'the workspace .venv was run');
});

test('Restricted Mode takes command, extraArgs and provider from the user settings only', async () => {
  stub.trusted = false;
  stub.settings = { connection: 'stdio', command: join(venvBin, 'agentd'), provider: 'mock', extraArgs: ['--session-dir', home.sessions] };
  const controller = activate();
  const info = await controller.request('session/new', { cwd: home.project });
  assert.equal(info.provider, 'mock');
  assert.equal(info.permissionMode, 'read-only');
  assert.ok(readdirSync(home.sessions, { recursive: true }).some((name) => String(name).includes(info.sessionId)));
  assert.equal(existsSync(evilSessions), false);
  assert.equal(existsSync(marker), false);
});
