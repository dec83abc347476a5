// Shared pieces of the node --test layer: the repo's venv, temp homes, a client on a real daemon.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..', '..', '..');
/** The bundle of src/client (built by `node esbuild.mjs`). */
export const client = require(join(here, '..', 'dist', 'client.js'));

/** The venv's bin folder: AGENTD_VENV_BIN, else the repo's .venv. */
export const venvBin = process.env.AGENTD_VENV_BIN ?? join(repo, '.venv', 'bin');
if (!existsSync(join(venvBin, 'agentd'))) {
  throw new Error(`no agentd in ${venvBin}: run \`make .venv/.installed\` at the repo root first`);
}

/** The user config of the tests' runs: they ask for `auto` without a sandbox, which the
 * daemon allows only when the user opts in (as tests/harness.py does for the Python layers). */
export const TEST_USER_CONFIG = '[permissions]\nallow_auto_without_sandbox = true\n';

/** A temp folder with XDG dirs (the user config opting in to unsandboxed `auto`), a project
 * folder and a session dir; removed by `cleanup()`. */
export function tempHome() {
  const root = mkdtempSync(join('/tmp', 'vsc-'));
  const env = { ...process.env };
  for (const name of ['XDG_RUNTIME_DIR', 'XDG_STATE_HOME', 'XDG_DATA_HOME', 'XDG_CONFIG_HOME']) {
    const dir = join(root, name.slice(4, 7).toLowerCase());
    mkdirSync(dir, { mode: 0o700 });
    env[name] = dir;
  }
  mkdirSync(join(env.XDG_CONFIG_HOME, 'agentd'), { mode: 0o700 });
  writeFileSync(join(env.XDG_CONFIG_HOME, 'agentd', 'config.toml'), TEST_USER_CONFIG);
  const project = join(root, 'project');
  const sessions = join(root, 'sessions');
  mkdirSync(project);
  return { root, env, project, sessions, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A client on a private `agentd serve --stdio` with the mock provider's sessions in `home`. */
export function stdioClient(home, options = {}) {
  const log = [];
  const instance = new client.AgentdClient({
    launch: () => ({
      file: join(venvBin, 'agentd'),
      args: ['serve', '--stdio', '--session-dir', home.sessions],
      label: 'agentd serve --stdio',
    }),
    cwd: home.project,
    env: home.env,
    log: (line) => log.push(line),
    ...options,
  });
  instance.logLines = log;
  return instance;
}

/** Resolve with the first event (params) matching `predicate`; reject after `ms`. */
export function waitForEvent(agentd, predicate, ms = 15000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out waiting for an event')), ms);
    agentd.onEvent((params) => {
      if (predicate(params)) {
        clearTimeout(timer);
        resolve(params);
      }
    });
  });
}

/** Collect every event of the client into an array. */
export function recordEvents(agentd) {
  const events = [];
  agentd.onEvent((params) => events.push(params));
  return events;
}

/** Start `agentd serve --socket` (the shared daemon) in `home`; resolves when it listens. */
export async function socketDaemon(home) {
  const socket = join(home.root, 'run', 'agentd.sock');
  const child = spawn(join(venvBin, 'agentd'), ['serve', '--socket', socket, '--session-dir', home.sessions, '--log-file', join(home.root, 'daemon.log')], {
    env: home.env,
    stdio: 'ignore',
  });
  for (let i = 0; i < 200 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 25));
  if (!existsSync(socket)) throw new Error('the socket daemon did not start');
  return { socket, child, stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))) };
}

export const tmp = tmpdir();
