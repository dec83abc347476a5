/**
 * Files the agent changes: snapshots for "Open diff" (before ↔ after, via `vscode.diff`) and the
 * refresh of open editors.
 *
 * When a write, edit or undo_edit call ends, the file is read at once and its text before the
 * change is recovered from the tool's unified diff (`details.diff`); both are kept in memory
 * (the last MAX_SNAPSHOTS) under the `agentd-snapshot:` scheme. An open editor without unsaved
 * changes is brought up to date with the disk; one with unsaved changes gets a warning instead.
 */
import { readFile } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { reverseUnifiedDiff, type SessionEvent } from './client';
import type { EditDetails, ToolDetails, UndoEditDetails, WriteDetails } from './protocol';

const SCHEME = 'agentd-snapshot';
const MAX_SNAPSHOTS = 200;
/** How long the workbench's own file watcher gets to reload an unchanged editor first. */
const REFRESH_DELAY_MS = 300;

/** The details of a call that changed a file (write, edit, undo_edit), else null. */
export function fileChange(details: ToolDetails | null | undefined): WriteDetails | EditDetails | UndoEditDetails | null {
  switch (details?.type) {
    case 'write':
    case 'edit':
    case 'undo_edit':
      return details;
    default:
      return null;
  }
}

interface Snapshot {
  path: string;
  before: string;
  after: string;
}

/** What the chat knows about a tool call when it asks for a diff. */
export interface DiffRequest {
  toolCallId: string;
  path?: string;
  diff?: string;
}

export class Edits implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);

  constructor(private readonly log: (line: string) => void) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    const [toolCallId, side] = uri.query.split('&');
    const snapshot = this.snapshots.get(decodeURIComponent(toolCallId));
    if (!snapshot) return '';
    return side === 'before' ? snapshot.before : snapshot.after;
  }

  /** Called for every session event: snapshot and refresh after an editing tool. */
  async onEvent(params: SessionEvent, cwd: string | undefined): Promise<void> {
    const event = params.event;
    if (event.type !== 'tool_execution_end' || event.isError) return;
    const details = fileChange(event.details);
    if (!details?.path) return;
    const raw = details.path;
    const path = isAbsolute(raw) || !cwd ? raw : join(cwd, raw);
    const after = await readFile(path, 'utf8').catch(() => null);
    if (after === null) return;
    if (typeof details.diff === 'string') this.remember(event.toolCallId, path, details.diff, after);
    await this.refresh(path, after);
  }

  private remember(toolCallId: string, path: string, diff: string, after: string): Snapshot | null {
    const before = diff.startsWith('--- /dev/null') ? '' : reverseUnifiedDiff(after, diff);
    if (before === null) return null;
    const snapshot = { path, before, after };
    this.snapshots.set(toolCallId, snapshot);
    if (this.snapshots.size > MAX_SNAPSHOTS) this.snapshots.delete(this.snapshots.keys().next().value as string);
    return snapshot;
  }

  /** Show before ↔ after of a tool call; falls back to the diff text when it no longer applies. */
  async openDiff(request: DiffRequest): Promise<void> {
    let snapshot = this.snapshots.get(request.toolCallId) ?? null;
    if (!snapshot && request.path && request.diff) {
      const after = await readFile(request.path, 'utf8').catch(() => '');
      snapshot = this.remember(request.toolCallId, request.path, request.diff, after);
    }
    if (!snapshot) {
      const document = await vscode.workspace.openTextDocument({ content: request.diff ?? '', language: 'diff' });
      await vscode.window.showTextDocument(document, { preview: true });
      return;
    }
    const uri = (side: string) =>
      vscode.Uri.from({ scheme: SCHEME, path: snapshot.path, query: `${encodeURIComponent(request.toolCallId)}&${side}` });
    const title = `${basename(snapshot.path)} (agent edit)`;
    await vscode.commands.executeCommand('vscode.diff', uri('before'), uri('after'), title, { preview: true });
  }

  private async refresh(path: string, disk: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, REFRESH_DELAY_MS)); // the file watcher usually wins
    const document = vscode.workspace.textDocuments.find((doc) => doc.uri.scheme === 'file' && doc.uri.fsPath === path);
    if (!document || document.getText() === disk) return;
    if (document.isDirty) {
      const choice = await vscode.window.showWarningMessage(
        `agentd changed ${basename(path)} on disk, and the editor has unsaved changes.`,
        'Show Differences',
      );
      if (choice) await vscode.commands.executeCommand('workbench.files.action.compareWithSaved', document.uri);
      return;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), disk);
    if ((await vscode.workspace.applyEdit(edit)) && document.getText() === disk) await document.save();
    this.log(`refreshed ${path}`);
  }

  dispose(): void {
    this.registration.dispose();
  }
}
