// Generate src/protocol.ts from schemas/protocol.schema.json with json-schema-to-typescript.
//
//   node scripts/gen-protocol.mjs            write src/protocol.ts
//   node scripts/gen-protocol.mjs --check    exit 1 when src/protocol.ts differs from the schema
//
// Every type under `$defs` becomes an exported interface or type; the schema's `methods` and
// `notifications` tables become the `ClientMethods`, `ServerMethods` and `Notifications` maps
// (method name → params and result types) that the protocol client is typed with.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const schemaPath = join(here, '..', '..', '..', 'schemas', 'protocol.schema.json');
const outPath = join(here, '..', 'src', 'protocol.ts');

const HEADER = `/* Generated from schemas/protocol.schema.json by scripts/gen-protocol.mjs: do not edit.
 * Regenerate with \`npm run gen-protocol\`; test/protocol-drift.test.mjs fails on drift. */
`;

/** The `$ref` target's type name. */
function refName(ref) {
  return ref.replace('#/$defs/', '');
}

/** Free-form objects (`type: object` without `properties`) become `{[k: string]: unknown}`. */
function openFreeFormObjects(node) {
  if (Array.isArray(node)) {
    node.forEach(openFreeFormObjects);
  } else if (node && typeof node === 'object') {
    if (node.type === 'object' && !node.properties && node.additionalProperties === undefined) {
      node.additionalProperties = true;
    }
    Object.values(node).forEach(openFreeFormObjects);
  }
}

/** A JSON Schema whose only purpose is to make every `$defs` entry a named export. */
function rootSchema(schema) {
  const defs = structuredClone(schema.$defs);
  for (const [name, def] of Object.entries(defs)) {
    def.title = name;
    delete def.discriminator;
  }
  openFreeFormObjects(defs);
  return {
    title: 'ProtocolTypes',
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.keys(defs).map((name) => [name, { $ref: `#/$defs/${name}` }])),
    $defs: defs,
  };
}

function methodMaps(schema) {
  const lines = [];
  for (const direction of ['client', 'server']) {
    const name = direction === 'client' ? 'ClientMethods' : 'ServerMethods';
    lines.push(`/** Methods called by ${direction === 'client' ? 'clients on the daemon' : 'the daemon on clients'}. */`);
    lines.push(`export interface ${name} {`);
    for (const [method, spec] of Object.entries(schema.methods)) {
      if (spec.direction !== direction) continue;
      lines.push(`  /** ${spec.description} */`);
      lines.push(`  '${method}': { params: ${refName(spec.params.$ref)}; result: ${refName(spec.result.$ref)} };`);
    }
    lines.push('}', '');
  }
  lines.push('/** Notifications sent by the daemon. */', 'export interface Notifications {');
  for (const [method, spec] of Object.entries(schema.notifications)) {
    if (spec.$ref) lines.push(`  '${method}': ${refName(spec.$ref)};`);
  }
  lines.push('}', '');
  lines.push(`/** The protocol version this file was generated for. */`);
  lines.push(`export const PROTOCOL_VERSION = ${schema.protocolVersion};`, '');
  lines.push('/** JSON-RPC error codes the daemon uses, by name. */', 'export const ErrorCodes = {');
  for (const spec of schema.errors) lines.push(`  ${spec.name}: ${spec.code},`);
  lines.push('} as const;', '');
  return lines.join('\n');
}

export async function generate() {
  const schema = JSON.parse(await readFile(schemaPath, 'utf8'));
  const types = await compile(rootSchema(schema), 'ProtocolTypes', {
    bannerComment: '',
    additionalProperties: false,
    unreachableDefinitions: true,
    format: true,
    style: { singleQuote: true, printWidth: 100 },
  });
  const withoutRoot = types
    .replace(/export interface ProtocolTypes \{[\s\S]*?\n\}\n/, '')
    .replace(/ \*\n \* This interface was referenced by `ProtocolTypes`'s JSON-Schema\n \* via the `definition` "\w+"\.\n/g, '');
  return `${HEADER}\n${withoutRoot.trim()}\n\n${methodMaps(schema)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await generate();
  if (process.argv.includes('--check')) {
    const current = await readFile(outPath, 'utf8').catch(() => '');
    if (current !== text) {
      console.error('src/protocol.ts is out of date: run `npm run gen-protocol` in editors/vscode');
      process.exit(1);
    }
  } else {
    await writeFile(outPath, text);
  }
}
