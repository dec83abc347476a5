/**
 * Which process the extension spawns to reach agentd. No `vscode` imports: the settings are
 * passed in, so this runs under `node --test`.
 *
 * - `shared` (default): `agentctl bridge [extraArgs]`, which relays stdio to the shared daemon's
 *   Unix socket and starts that daemon when none runs.
 * - `stdio`: `agentd serve --stdio [extraArgs]`, a private daemon owned by the window.
 *
 * `command` is the `agentd` executable, or a folder holding `agentd` and `agentctl`; `agentctl`
 * is taken from beside an explicit `agentd`. Empty: `PATH`, then each workspace folder's
 * `.venv/bin` — only in a trusted workspace: in Restricted Mode (`trusted: false`) nothing in
 * the workspace is run, and the caller passes only user-level `command` and `extraArgs`.
 */
import { existsSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

export type ConnectionMode = 'shared' | 'stdio';

export interface LaunchSettings {
  connection: ConnectionMode;
  command: string;
  extraArgs: readonly string[];
  workspaceFolders: readonly string[];
  /** False in Restricted Mode: the workspace's `.venv/bin` is never searched. */
  trusted: boolean;
  env: NodeJS.ProcessEnv;
}

export interface Launch {
  file: string;
  args: string[];
  /** What the Output channel and error messages call it, e.g. "agentctl bridge". */
  label: string;
}

/** Raised when no executable can be found; the message tells the user what to set. */
export class LaunchError extends Error {}

function isExecutableFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutableFile(join(dir, name))) return join(dir, name);
  }
  return null;
}

function findExecutable(name: string, settings: LaunchSettings): string | null {
  const configured = settings.command.trim();
  if (configured) {
    const isDir = existsSync(configured) && statSync(configured).isDirectory();
    const dir = isDir ? configured : dirname(configured);
    if (!isDir && name === 'agentd') return configured;
    const beside = join(dir, name);
    return isExecutableFile(beside) ? beside : onPath(name, settings.env);
  }
  const found = onPath(name, settings.env);
  if (found || !settings.trusted) return found;
  for (const folder of settings.workspaceFolders) {
    const candidate = join(folder, '.venv', 'bin', name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** The process to spawn for `settings`, or a LaunchError naming what is missing. */
export function resolveLaunch(settings: LaunchSettings): Launch {
  const name = settings.connection === 'stdio' ? 'agentd' : 'agentctl';
  const file = findExecutable(name, settings);
  if (!file && !settings.trusted) {
    throw new LaunchError(
      `Cannot find \`${name}\` on PATH. In Restricted Mode agentd runs nothing from the workspace (its .venv included): set "agentd.command" in your user settings, or trust the workspace.`,
    );
  }
  if (!file) {
    throw new LaunchError(
      `Cannot find \`${name}\` on PATH or in a workspace .venv: set "agentd.command" to the agentd executable or its folder.`,
    );
  }
  const base = settings.connection === 'stdio' ? ['serve', '--stdio'] : ['bridge'];
  return { file, args: [...base, ...settings.extraArgs], label: `${name} ${base.join(' ')}` };
}
