// src/protocol.ts is generated from schemas/protocol.schema.json; it must not drift.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { generate, outputs } from '../scripts/gen-protocol.mjs';
import { here, repo } from './helpers.mjs';

test('src/protocol.ts equals a fresh generation (run `make schema` after changing a wire type)', async () => {
  const current = readFileSync(join(here, '..', 'src', 'protocol.ts'), 'utf8');
  assert.equal(current, await generate());
});

test("the web UI's protocol.d.ts equals a fresh generation, with the constants declared", async () => {
  const [, [path, wanted]] = await outputs();
  assert.equal(readFileSync(path, 'utf8'), wanted);
  assert.match(wanted, /export declare const PROTOCOL_VERSION: \d+;/);
  assert.match(wanted, /readonly InvalidParams: -32602;/);
  assert.match(wanted, /export type ToolDetails =/);
  assert.doesNotMatch(wanted, /export const /);
});

test('every method of the schema is typed, in the right direction', async () => {
  const schema = JSON.parse(readFileSync(join(repo, 'schemas', 'protocol.schema.json'), 'utf8'));
  const text = readFileSync(join(here, '..', 'src', 'protocol.ts'), 'utf8');
  const server = text.slice(text.indexOf('export interface ServerMethods'));
  for (const [method, spec] of Object.entries(schema.methods)) {
    assert.ok(text.includes(`'${method}': { params: `), method);
    assert.equal(server.includes(`'${method}'`), spec.direction === 'server', method);
  }
});
