// Reconnecting: a lost bridge re-attaches with session/subscribe {sinceSeq} (no gap, no
// duplicate); a crashed daemon is restarted with backoff and the UI is told to resync.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { client, recordEvents, socketDaemon, stdioClient, tempHome, venvBin, waitForEvent } from './helpers.mjs';

function waitForState(agentd, state, ms = 15000) {
  return new Promise((resolve, reject) => {
    if (agentd.state === state) return resolve();
    const timer = setTimeout(() => reject(new Error(`timed out waiting for state ${state} (now ${agentd.state})`)), ms);
    agentd.onState((now) => {
      if (now === state) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

/** A scenario file whose reply streams in 4-character pieces every 40 ms (about 2 s). */
function streamingScenario(home) {
  const path = join(home.root, 'scenarios.json');
  const content = 'This reply streams in small pieces so that the bridge can be killed halfway through it.';
  const step = { response: { content }, chunk_size: 4, chunk_delay_ms: 40 };
  writeFileSync(path, JSON.stringify({ scenarios: [{ name: 'stream', trigger: 'stream', steps: [step] }], default_response: { content: 'ok' } }));
  home.env.AGENTD_MOCK_SCENARIOS = path;
}

test('shared mode: the bridge dies mid-run, the client re-attaches from the last seq', async () => {
  const home = tempHome();
  streamingScenario(home);
  const daemon = await socketDaemon(home);
  const agentd = new client.AgentdClient({
    launch: () => ({ file: join(venvBin, 'agentctl'), args: ['bridge', '--socket', daemon.socket], label: 'agentctl bridge' }),
    cwd: home.project,
    env: home.env,
    restart: { initialDelayMs: 50 },
  });
  try {
    const events = recordEvents(agentd);
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock' });
    const run = agentd.request('session/prompt', { sessionId: info.sessionId, text: 'stream' });
    run.catch(() => {});
    let updates = 0;
    await waitForEvent(agentd, (e) => e.event.type === 'message_update' && ++updates === 5);
    const firstBridge = agentd.pid;
    process.kill(firstBridge, 'SIGKILL');
    await assert.rejects(run, (error) => error.code === -32008);
    await waitForEvent(agentd, (e) => e.sessionId === info.sessionId && e.event.type === 'agent_end', 20000);
    assert.notEqual(agentd.pid, firstBridge);
    const seqs = events.filter((e) => e.sessionId === info.sessionId).map((e) => e.seq);
    assert.deepEqual(seqs, seqs.map((_, i) => seqs[0] + i), 'every seq exactly once, in order');
    const end = events.at(-1).event;
    assert.equal(end.stopReason, 'end_turn');
  } finally {
    await agentd.dispose();
    await daemon.stop();
    home.cleanup();
  }
});

test('stdio mode: a crashed daemon is restarted and the session resyncs from disk', async () => {
  const home = tempHome();
  const agentd = stdioClient(home, { restart: { initialDelayMs: 50 } });
  try {
    const states = [];
    agentd.onState((state) => states.push(state));
    const resynced = new Promise((resolve) => agentd.onResync(resolve));
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock' });
    const run = agentd.request('session/prompt', { sessionId: info.sessionId, text: 'be slow' });
    run.catch(() => {});
    await waitForEvent(agentd, (e) => e.event.type === 'message_update');
    const crashed = agentd.pid;
    process.kill(crashed, 'SIGKILL');
    await assert.rejects(run, (error) => error.code === -32008 && /lost/.test(error.message));
    assert.equal(await resynced, info.sessionId);
    assert.equal(agentd.state, 'live');
    assert.notEqual(agentd.pid, crashed);
    assert.deepEqual(states.slice(-2), ['restarting', 'live']);
    const { messages } = await agentd.request('session/messages', { sessionId: info.sessionId });
    assert.equal(messages[0].content[0].text, 'be slow');
    assert.ok(agentd.logLines.some((line) => /exited \(signal SIGKILL\)/.test(line)));
  } finally {
    await agentd.dispose();
    home.cleanup();
  }
});

test('a daemon that cannot start is retried with backoff, then given up until the next request', async () => {
  const log = [];
  let launches = 0;
  const agentd = new client.AgentdClient({
    launch: () => {
      launches += 1;
      return { file: '/bin/sh', args: ['-c', 'echo cannot start >&2; exit 3'], label: 'broken' };
    },
    log: (line) => log.push(line),
    restart: { initialDelayMs: 10, maxAttempts: 2 },
  });
  await assert.rejects(agentd.request('daemon/status', {}), (error) => error.code === -32008);
  await waitForState(agentd, 'failed');
  assert.equal(launches, 3, 'the first start and two restarts');
  assert.ok(log.includes('cannot start'), 'stderr reaches the log');
  assert.deepEqual(log.filter((l) => l.startsWith('restarting in')), ['restarting in 10 ms', 'restarting in 20 ms']);
  await assert.rejects(agentd.request('daemon/status', {}));
  assert.equal(launches, 4, 'a new request tries again');
  await agentd.dispose();
});
