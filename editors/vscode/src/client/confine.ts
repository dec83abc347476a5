/**
 * Which files the editor serves to the daemon (`fs/readTextFile`, `fs/writeTextFile`): only
 * those inside the window's workspace folders. No `vscode` imports.
 *
 * Contract: `confineToFolders(path, folders)` resolves with the file's real path — symlinks
 * followed with `realpath` on both the path and the folders; for a file that does not exist yet,
 * the real path of its nearest existing folder plus the rest — when that lies inside one of
 * `folders`, and rejects with `OutsideWorkspace` otherwise (relative paths, `..` escapes,
 * symlinks pointing out, no folder open). The daemon on the other end is not trusted to ask
 * only for workspace files: a process squatting on the daemon's socket would otherwise read
 * `~/.ssh` through the editor.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A file request for a path outside the workspace folders; the message is the tool's error. */
export class OutsideWorkspace extends Error {}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest. */
async function realPathOrNearest(path: string): Promise<string> {
  const rest: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(await realpath(current), ...rest.reverse());
    } catch (error) {
      const parent = dirname(current);
      if ((errorCode(error) !== 'ENOENT' && errorCode(error) !== 'ENOTDIR') || parent === current) throw error;
      rest.push(basename(current));
      current = parent;
    }
  }
}

function contains(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

export async function confineToFolders(path: string, folders: readonly string[]): Promise<string> {
  const refuse = () =>
    new OutsideWorkspace(
      folders.length === 0
        ? `the editor serves no files: this window has no workspace folder (asked for ${path})`
        : `${path} is outside this window's workspace folders; the editor serves only files inside them`,
    );
  if (!isAbsolute(path) || folders.length === 0) throw refuse();
  const real = await realPathOrNearest(resolve(path));
  for (const folder of folders) {
    const root = await realpath(folder).catch(() => null);
    if (root !== null && contains(root, real)) return real;
  }
  throw refuse();
}
