// The protocol client against a real daemon (the repo's venv) and the built-in mock LLM.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { recordEvents, stdioClient, tempHome, waitForEvent } from './helpers.mjs';

describe('protocol client over agentd serve --stdio', () => {
  let home;
  let agentd;
  before(() => {
    home = tempHome();
    agentd = stdioClient(home);
  });
  after(async () => {
    await agentd.dispose();
    home.cleanup();
  });

  test('spawns nothing until the first request', async () => {
    assert.equal(agentd.state, 'stopped');
    assert.equal(agentd.pid, undefined);
    const status = await agentd.request('daemon/status', {});
    assert.equal(agentd.state, 'live');
    assert.equal(status.transport, 'stdio');
    assert.equal(status.pid, agentd.pid);
  });

  test('a run with tool calls streams deltas and tool events, then writes the file', async () => {
    const events = recordEvents(agentd);
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock', permissionMode: 'auto' });
    const result = await agentd.request('session/prompt', { sessionId: info.sessionId, text: 'hello world' });
    assert.equal(result.stopReason, 'end_turn');
    const mine = events.filter((e) => e.sessionId === info.sessionId);
    const types = mine.map((e) => e.event.type);
    assert.equal(types[0], 'agent_start');
    assert.equal(types.at(-1), 'agent_end');
    assert.ok(types.includes('message_update'));
    const tools = mine.filter((e) => e.event.type === 'tool_execution_end').map((e) => e.event.name);
    assert.deepEqual(tools, ['write', 'bash']);
    const bash = mine.find((e) => e.event.type === 'tool_execution_end' && e.event.name === 'bash');
    assert.equal(bash.event.details.exitCode, 0);
    assert.equal(readFileSync(join(home.project, 'hello.py'), 'utf8'), "print('Hello, World!')\n");
    // seq rises by one per event; the client remembers the last one
    assert.deepEqual(mine.map((e) => e.seq), mine.map((_, i) => mine[0].seq + i));
    assert.equal(agentd.sessions.get(info.sessionId), mine.at(-1).seq);
  });

  test('an approval is answered by the permission handler (allow once, then reject)', async () => {
    const asked = [];
    agentd.onPermission(async (params) => {
      asked.push(params);
      return { outcome: params.tool === 'write' ? 'allow_once' : 'reject_once' };
    });
    const events = recordEvents(agentd);
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock', permissionMode: 'ask' });
    await agentd.request('session/prompt', { sessionId: info.sessionId, text: 'hello world' });
    assert.deepEqual(asked.map((p) => p.tool), ['write', 'bash']);
    assert.deepEqual(asked[0].options, [
      'allow_once', 'allow_always', 'reject_once', 'reject_always', 'allow_always_project',
    ]);
    const resolved = events.filter((e) => e.event.type === 'permission_resolved').map((e) => e.event.outcome);
    assert.deepEqual(resolved, ['allow_once', 'reject_once']);
    const bash = events.find((e) => e.event.type === 'tool_execution_end' && e.event.name === 'bash');
    assert.equal(bash.event.isError, true);
    agentd.onPermission(null);
  });

  test('a question settled elsewhere is withdrawn: the handler sees the abort', async () => {
    let withdrawn;
    let asked;
    const aborted = new Promise((resolve) => (withdrawn = resolve));
    const questioned = new Promise((resolve) => (asked = resolve));
    agentd.onPermission((params, signal) => new Promise((resolve) => {
      asked();
      signal.addEventListener('abort', () => {
        withdrawn(params.toolCallId);
        resolve(null);
      });
    }));
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock', permissionMode: 'ask' });
    const run = agentd.request('session/prompt', { sessionId: info.sessionId, text: 'hello world' });
    await questioned;
    await agentd.request('session/cancel', { sessionId: info.sessionId });
    assert.equal((await run).stopReason, 'cancelled');
    // The daemon withdraws its request with $/cancelRequest (it may arrive after the answer).
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('never withdrawn')), 5000));
    assert.equal(await Promise.race([aborted, timeout]), 'call_hello_1');
    agentd.onPermission(null);
  });

  test('cancel stops a streaming run', async () => {
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock' });
    const run = agentd.request('session/prompt', { sessionId: info.sessionId, text: 'be slow' });
    await waitForEvent(agentd, (e) => e.sessionId === info.sessionId && e.event.type === 'message_update');
    const cancelled = await agentd.request('session/cancel', { sessionId: info.sessionId });
    assert.equal(cancelled.cancelled, true);
    assert.equal((await run).stopReason, 'cancelled');
  });

  test('errors carry the JSON-RPC code', async () => {
    await assert.rejects(agentd.request('session/state', { sessionId: 'nope' }), (error) => {
      assert.equal(error.code, -32003);
      assert.match(error.message, /nope/);
      return true;
    });
  });
});

describe('launch resolution', () => {
  test('stdio spawns agentd serve --stdio; shared spawns agentctl bridge', async () => {
    const { resolveLaunch, LaunchError } = (await import('./helpers.mjs')).client;
    const { venvBin } = await import('./helpers.mjs');
    const base = { command: '', extraArgs: ['--session-dir', '/x'], workspaceFolders: [], trusted: true, env: { PATH: venvBin } };
    const stdio = resolveLaunch({ ...base, connection: 'stdio' });
    assert.equal(stdio.file, join(venvBin, 'agentd'));
    assert.deepEqual(stdio.args, ['serve', '--stdio', '--session-dir', '/x']);
    const shared = resolveLaunch({ ...base, connection: 'shared' });
    assert.equal(shared.file, join(venvBin, 'agentctl'));
    assert.deepEqual(shared.args, ['bridge', '--session-dir', '/x']);
    // not on PATH: the workspace's .venv
    const folder = join(venvBin, '..', '..');
    const fromVenv = resolveLaunch({ ...base, env: { PATH: '/nonexistent' }, workspaceFolders: [folder], connection: 'stdio' });
    assert.ok(existsSync(fromVenv.file) && fromVenv.file.endsWith('/.venv/bin/agentd'));
    // ... but never in Restricted Mode: the workspace's executables are not run
    assert.throws(
      () => resolveLaunch({ ...base, env: { PATH: '/nonexistent' }, workspaceFolders: [folder], trusted: false, connection: 'stdio' }),
      (e) => e instanceof LaunchError && /Restricted Mode/.test(e.message) && /user settings/.test(e.message),
    );
    // agentd.command as the executable: agentctl is taken from beside it
    const beside = resolveLaunch({ ...base, env: { PATH: '' }, command: join(venvBin, 'agentd'), connection: 'shared' });
    assert.equal(beside.file, join(venvBin, 'agentctl'));
    // as a folder
    assert.equal(resolveLaunch({ ...base, env: { PATH: '' }, command: venvBin, connection: 'stdio' }).file, join(venvBin, 'agentd'));
    assert.throws(() => resolveLaunch({ ...base, env: { PATH: '/nonexistent' }, connection: 'stdio' }), (e) => e instanceof LaunchError && /agentd\.command/.test(e.message));
  });
});
