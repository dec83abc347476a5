// Unit tests of the chat's pure modules (run by tests/web/test_ui_units.py via node --test).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { settledLength } from '../../../daemon/agentd/web/ui/mdsplit.js';
import { MAX_CHILD_STEPS, initialState, loadChildSteps, loadHistory, pendingPermissions, reduce, totalUsage } from '../../../daemon/agentd/web/ui/reducer.js';

const S = 's1';
let seq = 0;
const ev = (event, sessionId = S) => ({ sessionId, seq: ++seq, event });

/** A run: user prompt, streamed text, one bash tool call with output, final text. */
function runEvents() {
  seq = 0;
  return [
    ev({ type: 'agent_start' }),
    ev({ type: 'turn_start', turn: 1 }),
    ev({ type: 'message_start', messageId: 'u1', role: 'user' }),
    ev({ type: 'message_end', message: { role: 'user', id: 'u1', content: [{ type: 'text', text: 'list files' }], timestamp: 1 } }),
    ev({ type: 'message_start', messageId: 'a1', role: 'assistant' }),
    ev({ type: 'message_update', delta: { type: 'text_delta', text: 'Let me ' } }),
    ev({ type: 'message_update', delta: { type: 'text_delta', text: 'look.' } }),
    ev({ type: 'message_update', delta: { type: 'toolcall_start', index: 1, id: 'c1', name: 'bash' } }),
    ev({ type: 'message_update', delta: { type: 'toolcall_delta', index: 1, arguments: '{"command":' } }),
    ev({ type: 'message_update', delta: { type: 'toolcall_delta', index: 1, arguments: '"ls"}' } }),
    ev({ type: 'message_end', message: {
      role: 'assistant', id: 'a1', provider: 'mock', model: 'm', stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 5, cost: 0.5 },
      content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_call', id: 'c1', name: 'bash', arguments: { command: 'ls' } }],
    } }),
    ev({ type: 'tool_execution_start', toolCallId: 'c1', name: 'bash', args: { command: 'ls' }, kind: 'execute' }),
    ev({ type: 'tool_execution_update', toolCallId: 'c1', output: 'a.txt\n' }),
    ev({ type: 'tool_execution_update', toolCallId: 'c1', output: 'b.txt\n' }),
    ev({ type: 'tool_execution_end', toolCallId: 'c1', name: 'bash', result: [{ type: 'text', text: 'a.txt\nb.txt\n' }], details: { type: 'bash', command: 'ls', exitCode: 0, signal: null, timedOut: false, durationMs: 4, truncated: false, spillPath: null, totalBytes: 12, cwd: '/w' } }),
    ev({ type: 'message_start', messageId: 't1', role: 'tool_result' }),
    ev({ type: 'message_end', message: { role: 'tool_result', id: 't1', toolCallId: 'c1', toolName: 'bash', content: [{ type: 'text', text: 'a.txt\nb.txt\n' }] } }),
    ev({ type: 'message_start', messageId: 'a2', role: 'assistant' }),
    ev({ type: 'message_update', delta: { type: 'text_delta', text: 'Two files.' } }),
    ev({ type: 'message_end', message: { role: 'assistant', id: 'a2', provider: 'mock', model: 'm', content: [{ type: 'text', text: 'Two files.' }], usage: { inputTokens: 20, outputTokens: 3, cost: 0.25 } } }),
    ev({ type: 'agent_end', stopReason: 'end_turn', turns: 2, cost: 0.75 }),
  ];
}

const fold = (state, events) => events.reduce(reduce, state);
const shape = (state) => state.items.map((i) => `${i.kind}:${i.key}`);

test('a run becomes user, assistant, tool card, assistant', () => {
  const state = fold(initialState(S), runEvents());
  assert.deepEqual(shape(state), ['user:u1', 'assistant:a1', 'tool:c1', 'assistant:a2']);
  const tool = state.items[2];
  assert.equal(tool.status, 'done');
  assert.equal(tool.output, 'a.txt\nb.txt\n');
  assert.deepEqual(tool.args, { command: 'ls' });
  assert.equal(state.items[1].blocks[0].text, 'Let me look.');
  assert.equal(state.running, false);
  assert.equal(state.lastSeq, 21);
  assert.deepEqual(totalUsage(state), { inputTokens: 30, outputTokens: 8, cost: 0.75 });
});

test('mid-stream state: running, streaming text, tool arguments as they arrive', () => {
  const state = fold(initialState(S), runEvents().slice(0, 9));
  assert.equal(state.running, true);
  const assistant = state.items[1];
  assert.equal(assistant.streaming, true);
  assert.equal(assistant.blocks[0].text, 'Let me look.');
  assert.equal(state.items[2].argsText, '{"command":');
});

test('the old state is never modified', () => {
  const events = runEvents();
  const before = fold(initialState(S), events.slice(0, 6));
  const snapshot = JSON.stringify(before);
  reduce(before, events[6]);
  assert.equal(JSON.stringify(before), snapshot);
});

test('events of other sessions and repeated seqs change nothing', () => {
  const events = runEvents();
  const state = fold(initialState(S), events);
  assert.equal(reduce(state, { ...events[5], sessionId: 'other', seq: 99 }), state);
  assert.equal(reduce(state, events[5]), state);
});

test('history then a replay of the buffered events shows everything once', () => {
  const events = runEvents();
  const history = [
    events[3].event.message, events[10].event.message, events[16].event.message, events[19].event.message,
  ];
  const fromHistory = loadHistory(initialState(S), history);
  assert.deepEqual(shape(fromHistory), ['user:u1', 'assistant:a1', 'tool:c1', 'assistant:a2']);
  const replayed = fold(fromHistory, events);
  assert.deepEqual(shape(replayed), shape(fromHistory));
  assert.equal(replayed.items[1].blocks[0].text, 'Let me look.');
  assert.equal(replayed.items[3].blocks[0].text, 'Two files.');
});

test('a replay that starts mid-message keeps the partial text and names it at message_end', () => {
  const events = runEvents();
  const state = fold(initialState(S), [events[5], events[6], events[10]]);
  assert.deepEqual(shape(state), ['assistant:a1', 'tool:c1']);
  assert.equal(state.items[0].blocks[0].text, 'Let me look.');
});

test('permission request and resolution', () => {
  seq = 0;
  let state = fold(initialState(S), [
    ev({ type: 'agent_start' }),
    ev({ type: 'permission_request', toolCallId: 'c9', tool: 'bash', args: { command: 'rm x' }, options: ['allow_once', 'reject_once'] }),
  ]);
  assert.deepEqual(pendingPermissions(state), ['c9']);
  assert.equal(state.items[0].permission.pending, true);
  state = reduce(state, ev({ type: 'permission_resolved', toolCallId: 'c9', outcome: 'reject_once', reason: 'no' }));
  assert.deepEqual(pendingPermissions(state), []);
  assert.equal(state.items[0].permission.outcome, 'reject_once');
});

test('cancel ends streaming and pending approvals; errors and warnings become notices', () => {
  seq = 0;
  const state = fold(initialState(S), [
    ev({ type: 'agent_start' }),
    ev({ type: 'message_start', messageId: 'a1', role: 'assistant' }),
    ev({ type: 'message_update', delta: { type: 'text_delta', text: 'Hal' } }),
    ev({ type: 'permission_request', toolCallId: 'c1', tool: 'bash', args: {} }),
    ev({ type: 'error', message: 'provider failed', code: 'provider_error' }),
    ev({ type: 'agent_end', stopReason: 'cancelled' }),
  ]);
  assert.equal(state.items[0].streaming, false);
  assert.deepEqual(pendingPermissions(state), []);
  assert.equal(state.items[2].kind, 'notice');
  assert.equal(state.lastRun.stopReason, 'cancelled');
  const warned = reduce(reduce(state, { sessionId: S, seq: 0, event: { type: 'session_warning', message: 'torn line', line: 3 } }),
    { sessionId: S, seq: 0, event: { type: 'session_warning', message: 'torn line', line: 3 } });
  assert.equal(warned.items.filter((i) => i.kind === 'notice').length, 2);
});

test('queue updates and retries are shown, then cleared at the end of the run', () => {
  seq = 0;
  let state = fold(initialState(S), [
    ev({ type: 'agent_start' }),
    ev({ type: 'queue_update', steering: ['wait'], followUp: [] }),
    ev({ type: 'retry', attempt: 1, maxAttempts: 3, delayMs: 1500, error: '429' }),
  ]);
  assert.deepEqual(state.queue.steering, ['wait']);
  const retry = state.items.find((i) => i.kind === 'retry');
  assert.deepEqual({ ...retry, key: '' }, { kind: 'retry', key: '', attempt: 1, maxAttempts: 3, delayMs: 1500, error: '429', waiting: true });
  state = reduce(state, ev({ type: 'retry', attempt: 2, maxAttempts: 3, delayMs: 3000, error: '429' }));
  assert.equal(state.items.filter((i) => i.kind === 'retry').length, 1); // one wait, one item
  assert.equal(state.items.find((i) => i.kind === 'retry').attempt, 2);
  state = reduce(state, ev({ type: 'agent_end', stopReason: 'end_turn' }));
  assert.equal(state.items.find((i) => i.kind === 'retry').waiting, false);
  assert.equal(state.retryKey, null);
  assert.deepEqual(state.queue.steering, []);
});

test('a retry while a reply is open is shown on that reply, and ends with its first text', () => {
  seq = 0;
  let state = fold(initialState(S), [
    ev({ type: 'agent_start' }),
    ev({ type: 'message_start', messageId: 'a1', role: 'assistant' }),
    ev({ type: 'retry', attempt: 1, maxAttempts: 3, delayMs: 4000, error: '429 slow down' }),
  ]);
  assert.equal(state.items.length, 1);
  assert.equal(state.items[0].retry.waiting, true);
  state = reduce(state, ev({ type: 'message_update', delta: { type: 'text_delta', text: 'Hi' } }));
  assert.equal(state.items[0].retry, null);
  assert.equal(state.items[0].blocks[0].text, 'Hi');
});

test('a failed reply shows its error once: the error event repeating it adds no notice', () => {
  seq = 0;
  const state = fold(initialState(S), [
    ev({ type: 'agent_start' }),
    ev({ type: 'message_start', messageId: 'a1', role: 'assistant' }),
    ev({ type: 'message_end', message: { role: 'assistant', id: 'a1', content: [], stopReason: 'error', errorMessage: '500 boom' } }),
    ev({ type: 'error', message: '500 boom', code: 'provider_error' }),
    ev({ type: 'error', message: 'disk full', code: 'store_error' }),
    ev({ type: 'agent_end', stopReason: 'error', error: '500 boom' }),
  ]);
  assert.deepEqual(state.items.map((i) => i.kind), ['assistant', 'notice']);
  assert.equal(state.items[1].text, 'disk full');
});

test('settledLength cuts at blank lines outside code fences', () => {
  assert.equal(settledLength('para one\n\npara two'), 10);
  assert.equal(settledLength('```\ncode\n\nmore\n'), 0);
  const text = '```\ncode\n\nmore\n```\n\nafter';
  assert.equal(settledLength(text), text.indexOf('after'));
  assert.equal(settledLength('a\n\nb\n\nc', 3), 6);
  assert.equal(settledLength('no break yet'), 0);
});

const PREVIEW = { kind: 'diff', path: 'x', diff: '--- /dev/null\n+++ b/x\n@@ -0,0 +1,1 @@\n+hi\n', created: true, added: 1, removed: 0 };

test('an approval keeps the preview and the rule of "always" until it is answered', () => {
  seq = 0;
  let state = initialState(S);
  state = reduce(state, ev({ type: 'tool_execution_start', toolCallId: 'c1', name: 'write', args: { path: 'x' } }));
  state = reduce(state, ev({ type: 'permission_request', toolCallId: 'c1', tool: 'write', args: { path: 'x' }, options: ['allow_once', 'allow_always'], preview: PREVIEW, alwaysRule: 'write' }));
  const card = state.items.find((item) => item.key === 'c1');
  assert.deepEqual(card.permission.preview, PREVIEW);
  assert.equal(card.permission.alwaysRule, 'write');
  state = reduce(state, ev({ type: 'permission_resolved', toolCallId: 'c1', outcome: 'allow_once' }));
  assert.equal(state.items.find((item) => item.key === 'c1').permission.pending, false);
});

test("a subagent's approval shows on its task's card; its tool calls and replies nest there", () => {
  seq = 0;
  let state = initialState(S);
  for (const params of [
    ev({ type: 'tool_execution_start', toolCallId: 't1', name: 'task', args: { description: 'Look', prompt: 'p' } }),
    ev({ type: 'subagent_start', toolCallId: 't1', childSessionId: 'kid', agent: 'general', description: 'Look' }),
    ev({ type: 'message_update', delta: { type: 'text_delta', text: 'child text' } }, 'kid'),
    ev({ type: 'permission_request', toolCallId: 'k1', tool: 'write', args: { path: 'x' }, options: ['allow_once'], preview: PREVIEW, alwaysRule: 'write' }, 'kid'),
    ev({ type: 'message_update', delta: { type: 'text_delta', text: 'stray' } }, 'stranger'),
  ]) state = reduce(state, params);
  const card = state.items.find((item) => item.key === 't1');
  assert.equal(state.items.length, 1);
  assert.deepEqual(card.child, { sessionId: 'kid', agent: 'general', description: 'Look' });  // no step yet
  assert.deepEqual(card.permission, {
    options: ['allow_once'], pending: true, callId: 'k1', tool: 'write', preview: PREVIEW, alwaysRule: 'write',
  });
  assert.deepEqual(pendingPermissions(state), ['t1']);
  state = reduce(state, ev({ type: 'permission_resolved', toolCallId: 'k1', outcome: 'allow_once' }, 'kid'));
  const resolved = state.items.find((item) => item.key === 't1');
  assert.equal(resolved.permission.pending, false);
  assert.equal(resolved.permission.outcome, 'allow_once');
  for (const params of [
    ev({ type: 'tool_execution_start', toolCallId: 'k1', name: 'write', args: { path: 'x' } }, 'kid'),
    ev({ type: 'tool_execution_end', toolCallId: 'k1', name: 'write', isError: false, result: [] }, 'kid'),
    ev({ type: 'message_end', message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'Wrote x.' }] } }, 'kid'),
    ev({ type: 'message_end', message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'Wrote x.' }] } }, 'kid'),
    ev({ type: 'tool_execution_start', toolCallId: 'z', name: 'bash', args: {} }, 'stranger'),
  ]) state = reduce(state, params);
  const nested = state.items.find((item) => item.key === 't1');
  assert.equal(state.items.length, 1);
  assert.deepEqual(nested.child.steps, [
    { key: 'k1', kind: 'tool', name: 'write', args: { path: 'x' }, status: 'done' },
    { key: 'm2', kind: 'text', text: 'Wrote x.' },
  ]);
  state = reduce(state, ev({ type: 'subagent_start', toolCallId: 't1', childSessionId: 'kid', agent: 'general', description: 'Look' }));
  assert.equal(state.items[0].child.steps.length, 2);  // a replayed start keeps the steps
  for (let i = 0; i < MAX_CHILD_STEPS + 5; i++) {
    state = reduce(state, ev({ type: 'tool_execution_start', toolCallId: `n${i}`, name: 'ls', args: {} }, 'kid'));
  }
  assert.equal(state.items[0].child.steps.length, MAX_CHILD_STEPS);
  assert.equal(state.items[0].child.steps.at(-1).key, `n${MAX_CHILD_STEPS + 4}`);
});

test('a hook block is a card; an allowed or failed hook adds nothing', () => {
  seq = 0;
  const state = fold(initialState(S), [
    ev({ type: 'agent_start' }),
    ev({ type: 'hook_result', event: 'pre_tool', command: 'ok.sh', exitCode: 0, decision: 'allow', durationMs: 2, tool: 'bash' }),
    ev({ type: 'hook_result', event: 'pre_tool', command: 'bad.sh', exitCode: 1, decision: 'error', durationMs: 2, reason: 'exited 1' }),
    ev({ type: 'hook_result', event: 'pre_tool', command: 'policy.sh', exitCode: 2, decision: 'block', durationMs: 3, reason: 'no rm -rf', tool: 'bash', toolCallId: 'c1' }),
    ev({ type: 'hook_result', event: 'user_prompt', command: 'gate.sh', exitCode: 2, decision: 'block', durationMs: 3, reason: 'frozen' }),
  ]);
  const cards = state.items.filter((i) => i.kind === 'notice');
  assert.deepEqual(cards.map((c) => c.level), ['blocked', 'blocked']);
  assert.equal(cards[0].text, '⊘ pre_tool hook blocked bash: no rm -rf (policy.sh)');
  assert.equal(cards[1].text, '⊘ user_prompt hook blocked the prompt: frozen (gate.sh)');
});

test('history places hook blocks after their messages; their replay is not a second card', () => {
  const events = runEvents();
  const history = [events[3].event.message, events[10].event.message, events[16].event.message, events[19].event.message];
  const block = (entryId, afterMessageId, reason) => ({
    entryId, afterMessageId,
    hook: { type: 'hook_result', event: 'user_prompt', command: 'gate.sh', exitCode: 2, decision: 'block', durationMs: 3, reason },
  });
  const blocks = [block('h0', null, 'first'), block('h1', 'a1', 'frozen'), block('h2', 'a2', 'frozen')];
  const loaded = loadHistory(initialState(S), history, blocks, 30);
  assert.deepEqual(shape(loaded), [
    'notice:hook:h0', 'user:u1', 'assistant:a1', 'tool:c1', 'notice:hook:h1', 'assistant:a2', 'notice:hook:h2',
  ]); // after a1 and the calls it made, as a live pre_tool block shows after its call
  assert.equal(loaded.items[4].text, '⊘ user_prompt hook blocked the prompt: frozen (gate.sh)');
  // The buffered events replayed after the history: each block matches one placed card.
  const replay = (reason, at) => ({ sessionId: S, seq: at, event: { ...blocks[0].hook, reason } });
  let state = fold(loaded, [replay('frozen', 28), replay('frozen', 29)]);
  assert.deepEqual(shape(state), shape(loaded));
  assert.equal(state.items.filter((i) => i.fromHistory).length, 1); // h0's event is no longer buffered
  // A new block after the history, with the same text, is a new card.
  state = reduce(state, replay('frozen', 31));
  assert.deepEqual(shape(state).at(-1), 'notice:notice:31');
});

test("a reopened task card gets its subagent's steps from the child's messages", () => {
  const details = {
    type: 'task', childSessionId: 'kid', agent: 'general', description: 'Write it', stopReason: 'end_turn',
    turns: 2, usage: { inputTokens: 1, outputTokens: 1 }, cost: 0,
  };
  const parent = [
    { role: 'assistant', id: 'a1', content: [{ type: 'tool_call', id: 't1', name: 'task', arguments: { description: 'Write it' } }] },
    { role: 'tool_result', id: 'r1', toolCallId: 't1', toolName: 'task', content: [{ type: 'text', text: 'Wrote it.' }], details },
  ];
  const child = [
    { role: 'user', id: 'u', content: [{ type: 'text', text: 'write the file' }] },
    { role: 'assistant', id: 'c1', content: [{ type: 'text', text: 'Writing.' }, { type: 'tool_call', id: 'w', name: 'write', arguments: { path: 'x.txt' } }, { type: 'tool_call', id: 'b', name: 'bash', arguments: { command: 'false' } }] },
    { role: 'tool_result', id: 'r2', toolCallId: 'w', toolName: 'write', content: [] },
    { role: 'tool_result', id: 'r3', toolCallId: 'b', toolName: 'bash', content: [], isError: true },
    { role: 'assistant', id: 'c2', content: [{ type: 'text', text: 'Wrote it.' }] },
  ];
  const state = loadChildSteps(loadHistory(initialState(S), parent), 't1', child);
  const card = state.items.find((i) => i.key === 't1');
  assert.equal(card.child.sessionId, 'kid');
  assert.deepEqual(card.child.steps.map((s) => (s.kind === 'text' ? s.text : `${s.name}:${s.status}`)), [
    'Writing.', 'write:done', 'bash:error', 'Wrote it.',
  ]);
  assert.equal(loadChildSteps(state, 'a1', child), state); // not a task card
});

test("a provider-side search is a search card, live and from history, shown once", () => {
  seq = 0;
  const details = { type: 'web_search', query: 'py jit', backend: 'anthropic', results: [{ title: 'Docs', url: 'https://docs.python.org/' }] };
  const block = { type: 'server_tool_call', id: 'srvtoolu_1', name: 'web_search', arguments: { query: 'py jit' }, result: 'Search results for "py jit":', details, api: 'anthropic' };
  const message = { role: 'assistant', id: 'a1', provider: 'anthropic', model: 'm', content: [block, { type: 'text', text: 'It has a JIT.' }] };
  const live = fold(initialState(S), [
    ev({ type: 'message_start', messageId: 'a1', role: 'assistant' }),
    ev({ type: 'tool_execution_start', toolCallId: 'srvtoolu_1', name: 'web_search', args: { query: 'py jit' }, kind: 'search' }),
    ev({ type: 'tool_execution_end', toolCallId: 'srvtoolu_1', name: 'web_search', result: [{ type: 'text', text: block.result }], details }),
    ev({ type: 'message_update', delta: { type: 'text_delta', text: 'It has a JIT.' } }),
    ev({ type: 'message_end', message }),
  ]);
  const fromHistory = loadHistory(initialState(S), [message]);
  for (const state of [live, fromHistory]) {
    const cards = state.items.filter((item) => item.kind === 'tool');
    assert.equal(cards.length, 1);
    assert.equal(cards[0].status, 'done');
    assert.equal(cards[0].name, 'web_search');
    assert.deepEqual(cards[0].args, { query: 'py jit' });
    assert.equal(cards[0].details.results[0].url, 'https://docs.python.org/');
  }
});

test('the pages a reply cites are its sources, each once', () => {
  const cite = (url, title) => ({ url, title, citedText: 'x' });
  const message = {
    role: 'assistant', id: 'a1', provider: 'anthropic', model: 'm',
    content: [
      { type: 'text', text: 'One.', citations: [cite('https://a.example/', 'A'), cite('https://b.example/', 'B')] },
      { type: 'text', text: 'Two.', citations: [cite('https://a.example/', 'A again')] },
    ],
  };
  const state = loadHistory(initialState(S), [message]);
  assert.deepEqual(state.items[0].sources, [{ url: 'https://a.example/', title: 'A' }, { url: 'https://b.example/', title: 'B' }]);
});

test('a reopened chat shows the questions a call asked, settled, as the live card did', () => {
  const question = { question: 'Which seat?', header: 'Seating', options: [{ label: 'inside' }, { label: 'terrace' }] };
  const answers = [{ selected: ['terrace'], other: null }];
  const call = { type: 'tool_call', id: 'call_0', name: 'mcp__e__book_table', arguments: { restaurant: 'Chez Test' } };
  const assistant = { role: 'assistant', id: 'a1', provider: 'mock', model: 'm', content: [call] };
  const details = { type: 'mcp', server: 'e', tool: 'book_table', elicited: [{ questions: [question], answers, questionId: 'q-1' }] };
  const result = { role: 'tool_result', id: 'r1', toolCallId: 'call_0', toolName: call.name, content: [{ type: 'text', text: 'booked' }], details };
  seq = 0;
  const live = fold(initialState(S), [
    ev({ type: 'message_end', message: assistant }),
    ev({ type: 'question_request', questionId: 'q-1', questions: [question], source: 'mcp', toolCallId: 'call_0', server: 'e' }),
    ev({ type: 'question_resolved', questionId: 'q-1', answers }),
    ev({ type: 'message_end', message: result }),
  ]);
  const fromHistory = loadHistory(initialState(S), [assistant, result]);
  const asked = { questionId: 'q-1', questions: [question], pending: false, answers, reason: undefined, url: null, server: 'e' };
  for (const state of [live, fromHistory]) {
    const [card] = state.items.filter((item) => item.kind === 'tool');
    assert.deepEqual(card.question, asked);
  }
  const askUser = { type: 'ask_user', questions: [question], answers: null, reason: 'no user can answer' };
  const older = loadHistory(initialState(S), [assistant, { ...result, toolName: 'ask_user', details: askUser }]);
  const [card] = older.items.filter((item) => item.kind === 'tool');
  assert.equal(card.question.questionId, 'call_0.1'); // kept without its id: named as the replay names it
  assert.equal(card.question.reason, 'no user can answer');
  assert.equal(card.question.server, null);
});
