// Unit tests of the session list's grouping and filter, and of folding long texts
// (run by tests/web/test_ui_units.py via node --test).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { foldAt, sizeLabel } from '../../../daemon/agentd/web/ui/longtext.js';
import { groupSessions } from '../../../daemon/agentd/web/ui/sidebar.js';

const at = (sessionId, cwd, title) => ({ sessionId, cwd, title, updatedAt: '2026-01-01T00:00:00Z' });

test('sessions are grouped by project, in order of each project\'s newest session', () => {
  const groups = groupSessions([at('a', '/p/one', 'fix'), at('b', '/p/two', 'docs'), at('c', '/p/one', 'tests')]);
  assert.deepEqual(groups.map((g) => [g.project, g.sessions.map((s) => s.sessionId)]), [['/p/one', ['a', 'c']], ['/p/two', ['b']]]);
});

test('a subagent\'s session follows its parent\'s, one level deeper per generation', () => {
  const child = (id, parent) => ({ ...at(id, '/p/one', id), parentSessionId: parent });
  const [group] = groupSessions([child('newer', null), child('kid', 'top'), child('grandkid', 'kid'), child('top', null), child('orphan', 'gone')]);
  assert.deepEqual(group.sessions.map((s) => `${group.depths.get(s.sessionId)}:${s.sessionId}`), ['0:newer', '0:top', '1:kid', '2:grandkid', '0:orphan']);
  const [looped] = groupSessions([child('x', 'y'), child('y', 'x')]);
  assert.deepEqual(looped.sessions.map((s) => s.sessionId).sort(), ['x', 'y']);
  const [filtered] = groupSessions([child('top', null), child('kid', 'top')], 'kid');
  assert.deepEqual(filtered.sessions.map((s) => [s.sessionId, filtered.depths.get(s.sessionId)]), [['kid', 0]]);
});

test('the filter matches title, path or id, case-insensitively', () => {
  const sessions = [at('a1', '/p/one', 'Fix the parser'), at('b2', '/p/two', null)];
  assert.deepEqual(groupSessions(sessions, 'PARSER').map((g) => g.project), ['/p/one']);
  assert.deepEqual(groupSessions(sessions, 'two').map((g) => g.project), ['/p/two']);
  assert.deepEqual(groupSessions(sessions, 'b2').map((g) => g.sessions[0].sessionId), ['b2']);
  assert.deepEqual(groupSessions(sessions, 'nothing'), []);
});

test('long texts fold after 20 lines or 2,000 characters; short ones not at all', () => {
  assert.equal(foldAt('short'), 5);
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
  assert.equal(lines.slice(0, foldAt(lines)).split('\n').length, 20);
  const huge = 'x'.repeat(5_000_000);
  assert.equal(foldAt(huge), 2_000);
  assert.equal(sizeLabel(5_000_000 - 2_000), '5.0 MB');
});

test('the hidden part of a folded text is counted in lines', async () => {
  const { countLines } = await import('../../../daemon/agentd/web/ui/longtext.js');
  const text = 'a\nb\nc\nd\n';
  assert.equal(countLines(text, foldAt(text)), 0);
  assert.equal(countLines(text, 1), 3); // after "a\n": b, c, d
  assert.equal(countLines('a\nb\nc', 1), 2); // no final newline: "c" is a line too
});
