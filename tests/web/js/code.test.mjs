// Unit tests of cutting highlighted code into runs of lines (codesplit.js), with the vendored
// highlight.js (run by tests/web/test_ui_units.py via node --test).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RUN_LINES, splitHighlighted, splitText } from '../../../daemon/agentd/web/ui/codesplit.js';
import hljs from '../../../daemon/agentd/web/ui/vendor/highlight.min.js';

const ENTITIES = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&#x27;': "'" };
const textOf = (html) => html.replace(/<[^>]+>/g, '').replace(/&(lt|gt|amp|quot|#x27);/g, (e) => ENTITIES[e]);
const balanced = (html) => (html.match(/<span/g) ?? []).length === (html.match(/<\/span>/g) ?? []).length;

test('text is cut after every 100th line, each run keeping its newlines', () => {
  const text = Array.from({ length: 250 }, (_, i) => `line ${i}`).join('\n');
  const runs = splitText(text);
  assert.equal(RUN_LINES, 100);
  assert.deepEqual(runs.map((r) => r.split('\n').length), [101, 101, 50]);
  assert.equal(runs.join(''), text);
  assert.deepEqual(splitText('a\nb\n', 2), ['a\nb\n']); // no empty run at the end
  assert.deepEqual(splitText(''), ['']);
  assert.deepEqual(splitHighlighted('<span class="hljs-string">a\nb</span>\n', 2), ['<span class="hljs-string">a\nb</span>\n']);
});

test('highlighted markup is cut like its text: every run well-formed, showing the same text', () => {
  // Multi-line strings and comments: spans that cross the cuts.
  const code = Array.from({ length: 60 }, (_, i) => `x${i} = """one\ntwo <b>&\nthree"""  # note ${i}\n`).join('');
  const html = hljs.highlight(code, { language: 'python' }).value;
  const runs = splitHighlighted(html, 7);
  const plain = splitText(code, 7);
  assert.equal(runs.length, plain.length);
  runs.forEach((run, i) => {
    assert.ok(balanced(run), run);
    assert.equal(textOf(run), plain[i]);
  });
  assert.match(runs[1], /^<span class="hljs-string">/); // reopened where the string went on
});
