// Builds ui/vendor/*.min.js from the packages pinned in package-lock.json (run by
// `make web-vendor` after `npm ci`): each library's ES module build (for highlight.js, its core
// and the languages named in highlight.entry.mjs), minified by esbuild,
// under a first line naming the package, its version and its licence; the package's licence
// text is copied beside it as <file>.LICENSE.txt.
//
//   node vendor.mjs [OUT_DIR]      (default: ui/vendor next to this file)

import { copyFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? join(here, 'ui', 'vendor');

const LIBRARIES = [
  { name: 'marked', entry: 'lib/marked.esm.js', file: 'marked.min.js' },
  { name: 'dompurify', entry: 'dist/purify.es.mjs', file: 'purify.min.js' },
  { name: 'highlight.js', entry: join(here, 'highlight.entry.mjs'), file: 'highlight.min.js' },
];

for (const lib of LIBRARIES) {
  const root = join(here, 'node_modules', lib.name);
  const meta = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  await build({
    entryPoints: [lib.entry.startsWith('/') ? lib.entry : join(root, lib.entry)],
    outfile: join(out, lib.file),
    bundle: true,
    format: 'esm',
    minify: true,
    legalComments: 'none',
    target: 'es2022',
    banner: { js: `/* ${lib.name} ${meta.version}, licence ${meta.license}: see ${lib.file}.LICENSE.txt */` },
    logLevel: 'warning',
  });
  copyFileSync(join(root, 'LICENSE'), join(out, `${lib.file}.LICENSE.txt`));
}
