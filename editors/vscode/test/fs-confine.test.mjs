// The editor's fs/* handlers against a hostile daemon (test/hostile-daemon.mjs, a real process
// on the client's pipes, as a fake daemon squatting on the socket would be): the bundle's
// EditorFiles serves files inside the workspace folders only — symlinks followed, `..` and
// relative paths refused — and nothing outside is read or written.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { context, loadExtension, stub } from './extension-host.mjs';
import { client, here, tempHome } from './helpers.mjs';

const { confineToFolders } = client;

const home = tempHome();
const project = home.project;
const outside = join(home.root, 'outside');
mkdirSync(outside);
writeFileSync(join(outside, 'id_rsa'), 'PRIVATE KEY\n');
writeFileSync(join(project, 'inside.txt'), 'workspace text\n');
symlinkSync(join(outside, 'id_rsa'), join(project, 'key-link'));
symlinkSync(outside, join(project, 'out-dir'));

const plan = [
  { method: 'fs/readTextFile', params: { sessionId: 's', path: join(outside, 'id_rsa') } },
  { method: 'fs/readTextFile', params: { sessionId: 's', path: join(project, 'key-link') } },
  { method: 'fs/readTextFile', params: { sessionId: 's', path: `${project}/../outside/id_rsa` } },
  { method: 'fs/readTextFile', params: { sessionId: 's', path: 'inside.txt' } },
  { method: 'fs/writeTextFile', params: { sessionId: 's', path: join(outside, 'planted'), content: 'x' } },
  { method: 'fs/writeTextFile', params: { sessionId: 's', path: join(project, 'out-dir', 'new', 'planted'), content: 'x' } },
  { method: 'fs/writeTextFile', params: { sessionId: 's', path: join(project, 'key-link'), content: 'overwritten' } },
  { method: 'fs/readTextFile', params: { sessionId: 's', path: join(project, 'inside.txt') } },
  { method: 'fs/writeTextFile', params: { sessionId: 's', path: join(project, 'sub', 'new.txt'), content: 'made\n' } },
];

stub.folders = [project];
stub.settings = { connection: 'stdio', command: join(here, 'hostile-daemon.mjs') };
process.env.HOSTILE_PLAN = JSON.stringify(plan);
const { extension } = loadExtension();
const ctx = context();
const { controller } = extension.activate(ctx);

after(async () => {
  for (const item of ctx.subscriptions) await item.dispose();
  home.cleanup();
});

test('a daemon gets workspace files only: outside paths, symlinks out and .. are refused', async () => {
  const { outcomes } = await controller.request('session/new', { cwd: project });
  const [secret, viaLink, viaDots, relative, plant, plantViaDir, overLink, inside, created] = outcomes;
  for (const refused of [secret, viaLink, viaDots, relative, plant, plantViaDir, overLink]) {
    assert.equal(refused.result, undefined, JSON.stringify(refused));
    assert.match(refused.error, /outside this window's workspace folders/);
  }
  assert.equal(existsSync(join(outside, 'planted')), false);
  assert.equal(existsSync(join(outside, 'new')), false);
  assert.equal(readFileSync(join(outside, 'id_rsa'), 'utf8'), 'PRIVATE KEY\n');
  assert.deepEqual(inside, { result: { content: 'workspace text\n' } });
  assert.ok(created.result !== undefined, JSON.stringify(created));
  assert.equal(readFileSync(join(project, 'sub', 'new.txt'), 'utf8'), 'made\n');
});

test('confineToFolders: real paths, new files under real folders, no folder serves nothing', async () => {
  assert.equal(await confineToFolders(join(project, 'inside.txt'), [project]), join(project, 'inside.txt'));
  assert.equal(await confineToFolders(join(project, 'a', 'b.txt'), [project]), join(project, 'a', 'b.txt'));
  // the folder itself reached through a symlink is still the folder
  symlinkSync(project, join(home.root, 'project-link'));
  assert.equal(await confineToFolders(join(home.root, 'project-link', 'inside.txt'), [project]), join(project, 'inside.txt'));
  assert.equal(await confineToFolders(join(project, 'inside.txt'), [join(home.root, 'project-link')]), join(project, 'inside.txt'));
  await assert.rejects(confineToFolders(join(project, 'inside.txt'), []), /no workspace folder/);
  await assert.rejects(confineToFolders(`${project}-sibling/x`, [project]), /outside/);
});
