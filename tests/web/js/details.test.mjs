// The UI reads a tool call's typed details only through details.js: by `type`, never by
// guessing at fields.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changeDiff, exitCode, fileChange } from '../../../daemon/agentd/web/ui/details.js';

const DIFF = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n';
const edit = { type: 'edit', path: '/w/a.txt', replacements: 1, diff: DIFF, firstChangedLine: 1, added: 1, removed: 1 };
const bash = {
  type: 'bash', command: 'ls', exitCode: 2, signal: null, timedOut: false, durationMs: 3,
  truncated: false, spillPath: null, totalBytes: 0, cwd: '/w',
};

test('file changes are write, edit and undo_edit details; their diff is read from them', () => {
  assert.equal(fileChange(edit), edit);
  assert.equal(changeDiff(edit), DIFF);
  const omitted = { type: 'write', path: '/w/big', created: false, bytes: 9, lines: 1, diffOmitted: true };
  assert.equal(fileChange(omitted), omitted);
  assert.equal(changeDiff(omitted), '');
  assert.equal(fileChange({ type: 'undo_edit', path: '/w/a.txt', deleted: true, remaining: 0 })?.path, '/w/a.txt');
});

test('other details are not file changes, and only bash has an exit code', () => {
  assert.equal(fileChange({ ...bash, diff: 'not a change' }), null);
  assert.equal(changeDiff({ type: 'error', error: 'tool_error' }), '');
  assert.equal(exitCode(bash), 2);
  assert.equal(exitCode({ ...bash, exitCode: null, signal: 'SIGKILL' }), null);
  assert.equal(exitCode(edit), null);
  assert.equal(exitCode(null), null);
  assert.equal(fileChange(undefined), null);
});
