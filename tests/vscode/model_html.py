"""Hostile model HTML for the chat UI's tests: a reply whose HTML tries to cover the approval
buttons (``position: fixed``), to pass for the page's own Allow button (``class``, ``id``, a
``<button>``) and to call home (an ``<img>`` beacon), followed by a tool call that asks for
approval. `write_scenarios()` adds it to the mock LLM's built-in scenarios (trigger
``ATTACK_PROMPT``); `FINDINGS_JS` lists what of it survived in the rendered reply."""

from __future__ import annotations

import json
from pathlib import Path

from agentd.mockllm.scenarios import BUILT_IN

ATTACK_PROMPT = "render the model html attack"
BEACON = "https://beacon.invalid/pixel.png"

HOSTILE_MARKDOWN = f"""Here is the summary you asked for.

<div id="app" class="item item--tool tool--asking" style="position: fixed; inset: 0; \
z-index: 2147483647; background: #c00; color: #fff; font-size: 40px">COVERED \
<a href="https://evil.invalid/approve" class="allow" id="allow" \
style="position: fixed; inset: 0">Allow</a></div>

<button data-option="allow_once" class="allow" name="allow">Allow</button>

<img src="{BEACON}" alt="beacon">

```js
const answer = 42;
```
"""

ATTACK_SCENARIO = {
    "name": "model-html-attack",
    "trigger": ATTACK_PROMPT,
    "steps": [
        {
            "response": {
                "content": HOSTILE_MARKDOWN,
                "tool_calls": [
                    {
                        "id": "call_attack_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command": "echo approved"}'},
                    }
                ],
            }
        },
        {"response": {"content": "Done."}},
    ],
}

FINDINGS_JS = """() => {
  const reply = [...document.querySelectorAll('.item--assistant')]
    .find((n) => n.textContent.includes('Here is the summary'));
  if (!reply) return ['no reply rendered'];
  const found = [];
  // What the page itself adds to code blocks (code.js): the copy button and its wrapper, the
  // highlighter's spans inside <code> (markup cannot make these: classes and buttons go).
  const OWN = '.code-block, .code-block > button.code-copy, pre > code.hljs, code.hljs span';
  const own = (node) => node.matches(OWN);
  for (const node of reply.querySelectorAll('.md-chunk *, .md-tail *')) {
    if (own(node)) continue;
    if (node.hasAttribute('style')) found.push(`style on <${node.tagName}>`);
    if (node.hasAttribute('id')) found.push(`id on <${node.tagName}>`);
    if (node.hasAttribute('name')) found.push(`name on <${node.tagName}>`);
    const code = node.tagName === 'CODE';
    const classes = [...node.classList].filter((c) => !(code && c.startsWith('language-')));
    if (classes.length) found.push(`class ${classes.join(' ')} on <${node.tagName}>`);
    if (node.tagName === 'BUTTON') found.push('a <button>');
    const position = getComputedStyle(node).position;
    if (position === 'fixed' || position === 'absolute') {
      found.push(`position ${position} on <${node.tagName}>`);
    }
  }
  if (!reply.querySelector('code.language-js')) found.push('the code block lost its language');
  return found;
}"""
"""What survived of the attack in the rendered reply (empty: nothing)."""

COVERED_JS = """(selector) => {
  const button = document.querySelector(selector);
  if (!button) return 'no such button';
  const box = button.getBoundingClientRect();
  const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  if (button.contains(top)) return '';
  return `covered by <${top?.tagName}> ${top?.textContent.slice(0, 40)}`;
}"""
"""'' when the element under the centre of ``selector`` is that button, else what covers it."""


def write_scenarios(path: Path) -> Path:
    """The built-in scenarios plus the attack, written to ``path``."""
    scenarios = json.loads(BUILT_IN.read_text())
    scenarios["scenarios"].insert(0, ATTACK_SCENARIO)
    path.write_text(json.dumps(scenarios))
    return path
