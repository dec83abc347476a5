// Generate src/protocol.ts from schemas/protocol.schema.json with json-schema-to-typescript,
// and the same types as declarations for the web UI's JSDoc (daemon/agentd/web/ui/protocol.d.ts,
// checked by `tsc -p daemon/agentd/web/ui`).
//
//   node scripts/gen-protocol.mjs            write both files
//   node scripts/gen-protocol.mjs --check    exit 1 when either differs from the schema
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
const declarationsPath = join(here, '..', '..', '..', 'daemon', 'agentd', 'web', 'ui', 'protocol.d.ts');

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

/**
 * `protocol.ts` as a declaration file: the interfaces and types unchanged, the two constants
 * declared with their literal types (a .d.ts holds no values).
 */
export function declarations(text) {
  return text
    .replace(HEADER, DECLARATIONS_HEADER)
    .replace(/export const PROTOCOL_VERSION = (\d+);/, 'export declare const PROTOCOL_VERSION: $1;')
    .replace(/export const ErrorCodes = \{([^}]*)\} as const;/, (_, body) =>
      `export declare const ErrorCodes: {${body.replace(/^ {2}(\w+): (-?\d+),$/gm, '  readonly $1: $2;')}};`);
}

const DECLARATIONS_HEADER = `/* Generated from schemas/protocol.schema.json by editors/vscode/scripts/gen-protocol.mjs: do not
 * edit. The wire types for the web UI's JSDoc (\`import('./protocol').ToolDetails\`); regenerate
 * with \`make schema\`. editors/vscode/test/protocol-drift.test.mjs fails on drift. */
`;

/** `[path, wanted text]` of every generated file. */
export async function outputs() {
  const text = await generate();
  return [[outPath, text], [declarationsPath, declarations(text)]];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [path, text] of await outputs()) {
    if (process.argv.includes('--check')) {
      const current = await readFile(path, 'utf8').catch(() => '');
      if (current !== text) {
        console.error(`${path} is out of date: run \`make schema\` (or \`npm run gen-protocol\` in editors/vscode)`);
        process.exitCode = 1;
      }
    } else {
      await writeFile(path, text);
    }
  }
}
