// The UI reads a tool call's typed details only through details.js: by `type`, never by
// guessing at fields.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changeDiff, exitCode, fileChange, mcpTool } from '../../../daemon/agentd/web/ui/details.js';

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

test('an MCP tool is read from its details, else from its mcp__server__tool name', () => {
  assert.deepEqual(mcpTool('mcp__fs__write_file', null), { server: 'fs', tool: 'write_file' });
  assert.deepEqual(mcpTool('mcp__my_db__drop__table', undefined), { server: 'my_db', tool: 'drop__table' });
  const details = { type: 'mcp', server: 'a__b', tool: 'c' };
  assert.deepEqual(mcpTool('mcp__a__b__c', details), { server: 'a__b', tool: 'c' });
  assert.equal(mcpTool('write', null), null);
  assert.equal(mcpTool('mcp__nothing', null), null);
  assert.equal(mcpTool('bash', bash), null);
});

test('a notebook edit shows the diff of its cell, but is no file change to open', () => {
  const cellDiff = '--- a/nb.ipynb#cell2\n+++ b/nb.ipynb#cell2\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
  const notebook = {
    type: 'notebook_edit', path: '/w/nb.ipynb', action: 'replace', index: 2, cellId: 'a1',
    cellType: 'code', diff: cellDiff, added: 1, removed: 1, cells: 3, outputsCleared: true,
  };
  assert.equal(changeDiff(notebook), cellDiff);
  assert.equal(fileChange(notebook), null);
});
