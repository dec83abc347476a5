// The session picker's order: a subagent's session right after its parent, one level deeper.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRequire } from 'node:module';

const { nestSessions } = createRequire(import.meta.url)('../dist/client.js');

const session = (sessionId, parentSessionId = null) => ({ sessionId, parentSessionId, updatedAt: '2026-01-01T00:00:00Z' });
const shape = (rows) => rows.map(({ session, depth }) => `${'  '.repeat(depth)}${session.sessionId}`);

test('children follow their parent, grandchildren deeper, the list order kept', () => {
  const listed = [session('new'), session('childB', 'parent'), session('grand', 'childA'), session('parent'), session('childA', 'parent')];
  assert.deepEqual(shape(nestSessions(listed)), ['new', 'parent', '  childB', '  childA', '    grand']);
});

test('a child whose parent is not listed stays at the top level, in its own place', () => {
  const listed = [session('orphan', 'gone'), session('top')];
  assert.deepEqual(shape(nestSessions(listed)), ['orphan', 'top']);
});

test('every session appears once, even when parent links form a cycle', () => {
  const listed = [session('a', 'b'), session('b', 'a'), session('self', 'self')];
  const rows = shape(nestSessions(listed));
  assert.equal(rows.length, 3);
  assert.deepEqual(rows.map((r) => r.trim()).sort(), ['a', 'b', 'self']);
});
