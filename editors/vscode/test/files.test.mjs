// capabilities.fs: the daemon's file tools read and write through the client's FileHandler
// (an editor's buffers) instead of the disk.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stdioClient, tempHome } from './helpers.mjs';

test('read and edit go through the file handler; the disk is left alone', async () => {
  const home = tempHome();
  const greeting = join(home.project, 'greeting.txt');
  writeFileSync(greeting, 'Hello from the disk\n');
  const buffers = new Map([[greeting, 'Hello from the buffer\n']]);
  const calls = [];
  const agentd = stdioClient(home, {
    files: {
      async read({ path }) {
        calls.push(['read', path]);
        return { content: buffers.get(path) ?? readFileSync(path, 'utf8') };
      },
      async write({ path, content }) {
        calls.push(['write', path]);
        buffers.set(path, content);
      },
    },
  });
  try {
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock', permissionMode: 'auto' });
    const result = await agentd.request('session/prompt', { sessionId: info.sessionId, text: 'fix the greeting' });
    assert.equal(result.stopReason, 'end_turn');
    assert.deepEqual(calls.map(([kind]) => kind), ['read', 'read', 'write']);
    assert.equal(buffers.get(greeting), 'Goodbye from the buffer\n');
    assert.equal(readFileSync(greeting, 'utf8'), 'Hello from the disk\n');
  } finally {
    await agentd.dispose();
    home.cleanup();
  }
});

test('a handler that fails becomes the tool error the model sees', async () => {
  const home = tempHome();
  writeFileSync(join(home.project, 'greeting.txt'), 'Hello\n');
  const agentd = stdioClient(home, {
    files: {
      read: async () => {
        throw new Error('the buffer is locked');
      },
      write: async () => {},
    },
  });
  const ends = [];
  agentd.onEvent((e) => e.event.type === 'tool_execution_end' && ends.push(e.event));
  try {
    const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock', permissionMode: 'auto' });
    await agentd.request('session/prompt', { sessionId: info.sessionId, text: 'fix the greeting' });
    const read = ends.find((e) => e.name === 'read');
    assert.equal(read.isError, true);
    assert.match(read.result[0].text, /the buffer is locked/);
  } finally {
    await agentd.dispose();
    home.cleanup();
  }
});
