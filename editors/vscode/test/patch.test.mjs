// reverseUnifiedDiff against diffs made by the daemon's own diff code (agentd.tools.files.diffs).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { client, venvBin } from './helpers.mjs';

/** Diffs of [before, after] pairs, computed by the daemon's summarize_change. */
function daemonDiffs(pairs) {
  const script = `
import json, sys
from agentd.tools.files.diffs import summarize_change
pairs = json.load(sys.stdin)
print(json.dumps([summarize_change(a, b, "f.txt").diff for a, b in pairs]))
`;
  return JSON.parse(execFileSync(join(venvBin, 'python'), ['-c', script], { input: JSON.stringify(pairs) }));
}

const lines = (n, f = (i) => `line ${i}`) => Array.from({ length: n }, (_, i) => `${f(i)}\n`).join('');

test('the text before an edit is recovered from the text after and the diff', () => {
  const big = lines(200);
  const pairs = [
    ['a\nb\nc\n', 'a\nB\nc\n'],
    [big, big.replace('line 10\n', 'ten\n').replace('line 150\n', 'x\ny\n')],
    [big, big.replace('line 0\n', '')],
    [big, `${big}tail\n`],
    ['no newline', 'no newline at end'],
    ['keep\nlast', 'keep\nlast\n'],
    ['x\n', ''],
    ['a\nb\n', 'a\nb\n'],
  ];
  const diffs = daemonDiffs(pairs);
  pairs.forEach(([before, after], i) => {
    assert.equal(client.reverseUnifiedDiff(after, diffs[i]), before, `pair ${i}:\n${diffs[i]}`);
  });
});

test('a diff that does not apply gives null', () => {
  const [diff] = daemonDiffs([['a\nb\nc\n', 'a\nB\nc\n']]);
  assert.equal(client.reverseUnifiedDiff('a\nchanged since\nc\n', diff), null);
  assert.equal(client.reverseUnifiedDiff('a\nB\nc\n', `${diff}\n… [diff truncated]\n`), null);
});
