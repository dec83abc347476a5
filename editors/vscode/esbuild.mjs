// Bundle the extension, the protocol client (for node --test) and the webview.
//   node esbuild.mjs            production build into dist/
//   node esbuild.mjs --watch    rebuild on change
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const webUi = join(here, '..', '..', 'daemon', 'agentd', 'web', 'ui');
const dist = join(here, 'dist');
const watch = process.argv.includes('--watch');

const node = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', sourcemap: true, logLevel: 'warning' };
const builds = [
  // The extension: `vscode` comes from the host; everything else is inlined (no node_modules in the .vsix).
  {
    ...node, entryPoints: [join(here, 'src', 'extension.ts')], outfile: join(dist, 'extension.js'), external: ['vscode'], minify: true,
    banner: { js: '/* Bundles vscode-jsonrpc (MIT); its licence is in licenses/. */' },
  },
  // The protocol client alone, for the node --test layer.
  { ...node, entryPoints: [join(here, 'src', 'client', 'index.ts')], outfile: join(dist, 'client.js') },
  // The webview: the shared chat UI of daemon/agentd/web/ui with the VS Code host adapter.
  {
    bundle: true, platform: 'browser', format: 'esm', target: 'es2022', minify: true, sourcemap: true, logLevel: 'warning',
    entryPoints: [join(here, 'src', 'webview', 'main.js')], outfile: join(dist, 'webview.js'),
    banner: { js: '/* Bundles marked and DOMPurify (daemon/agentd/web/ui/vendor); their licences are in licenses/. */' },
  },
];

await mkdir(dist, { recursive: true });
await copyFile(join(webUi, 'style.css'), join(dist, 'webview.css'));
// The vendored libraries' licences travel with the bundle (and into the .vsix).
await mkdir(join(dist, 'licenses'), { recursive: true });
for (const name of await readdir(join(webUi, 'vendor'))) {
  if (name.endsWith('.LICENSE.txt')) await copyFile(join(webUi, 'vendor', name), join(dist, 'licenses', name));
}
await copyFile(join(here, 'node_modules', 'vscode-jsonrpc', 'License.txt'), join(dist, 'licenses', 'vscode-jsonrpc.LICENSE.txt'));
if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
