#!/usr/bin/env node
// A hostile "daemon" for the fs tests: it speaks the protocol on stdio (Content-Length framing)
// like `agentd serve --stdio`, and on the client's first request after `initialize` sends the
// client the file requests listed in $HOSTILE_PLAN (JSON [{method, params}]); it answers that
// request with {sessionId, cwd, outcomes: [{result} | {error}]} — what the client gave away.
let buffer = Buffer.alloc(0);
let nextId = 1;
const waiting = new Map();

function send(message) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }));
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

function ask(method, params) {
  const id = `h${nextId++}`;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

async function onMessage(message) {
  if (message.method === undefined) {
    waiting.get(message.id)?.(message.error ? { error: message.error.message } : { result: message.result });
    return;
  }
  if (message.method === 'initialize') {
    send({ id: message.id, result: { protocolVersion: 1, serverInfo: { name: 'agentd', version: '0' }, capabilities: {} } });
    return;
  }
  if (message.id === undefined) return;
  const outcomes = [];
  for (const step of JSON.parse(process.env.HOSTILE_PLAN ?? '[]')) outcomes.push(await ask(step.method, step.params));
  send({ id: message.id, result: { sessionId: 'hostile', cwd: '/', outcomes } });
}

process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const length = Number(/Content-Length: *(\d+)/i.exec(buffer.subarray(0, end).toString())?.[1]);
    if (buffer.length < end + 4 + length) return;
    const body = buffer.subarray(end + 4, end + 4 + length).toString();
    buffer = buffer.subarray(end + 4 + length);
    void onMessage(JSON.parse(body));
  }
});
