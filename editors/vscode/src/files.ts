/**
 * The editor side of `fs/readTextFile` and `fs/writeTextFile`: the file tools of the sessions
 * this window follows read open buffers (unsaved changes included) and write through them, so an
 * agent's edit is in the editor's undo history. A written buffer is saved at once, so commands
 * the agent runs next (tests, builds) see the same text. Files not open in an editor are read
 * from and written to the disk.
 *
 * Only files inside the workspace folders are served (see `client/confine.ts`: symlinks
 * resolved, `..` refused); any other path is an error the daemon's tool reports.
 */
import { constants } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import { confineToFolders, type FileHandler, type ReadTextFileParams, type ReadTextFileResult, type WriteTextFileParams } from './client';

function openDocument(path: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((doc) => doc.uri.scheme === 'file' && doc.uri.fsPath === path);
}

/** The smallest range of `before` to replace to get `after` (common prefix and suffix kept). */
export function changedSpan(before: string, after: string): { start: number; end: number; text: string } {
  let start = 0;
  const limit = Math.min(before.length, after.length);
  while (start < limit && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let tail = 0;
  while (tail < limit - start && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail++;
  return { start, end: before.length - tail, text: after.slice(start, after.length - tail) };
}

/** Replace the file at `path` (a real path: its last component must not be a symlink). */
async function writeFileNoFollow(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const file = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666);
  try {
    await file.writeFile(content);
  } finally {
    await file.close();
  }
}

export class EditorFiles implements FileHandler {
  /** `folders`: the workspace folders, asked at each request (they can change). */
  constructor(
    private readonly log: (line: string) => void,
    private readonly folders: () => readonly string[],
  ) {}

  async read({ path }: ReadTextFileParams): Promise<ReadTextFileResult> {
    const real = await confineToFolders(path, this.folders());
    const document = openDocument(path) ?? openDocument(real);
    return { content: document ? document.getText() : await readFile(real, 'utf8') };
  }

  async write({ path, content }: WriteTextFileParams): Promise<void> {
    const real = await confineToFolders(path, this.folders());
    const document = openDocument(path) ?? openDocument(real);
    if (document) {
      const span = changedSpan(document.getText(), content);
      const edit = new vscode.WorkspaceEdit();
      edit.replace(document.uri, new vscode.Range(document.positionAt(span.start), document.positionAt(span.end)), span.text);
      if (!(await vscode.workspace.applyEdit(edit))) throw new Error(`the editor refused the change to ${path}`);
      if (document.isDirty && !(await document.save())) throw new Error(`the editor could not save ${path}`);
      this.log(`wrote ${path} through its editor`);
    }
    // A file that is not open, or whose editor had nothing to save (deleted on disk meanwhile).
    if ((await readFile(real, 'utf8').catch(() => null)) !== content) await writeFileNoFollow(real, content);
  }
}
