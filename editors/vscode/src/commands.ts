/**
 * The commands: New Session, Send Prompt, Send Selection, Fix Problems in File, Cancel,
 * Open Session (with rename, fork, export and delete on each entry), Show Log.
 */
import { relative } from 'node:path';
import * as vscode from 'vscode';
import { type NestedSession, nestSessions, type SessionSummary } from './client';
import type { Controller } from './controller';
import { sessionCwd } from './settings';

/** `path:L3-L7` and the selected text as a fenced block, for a prompt. */
export function selectionContext(path: string, languageId: string, startLine: number, endLine: number, text: string): string {
  const range = startLine === endLine ? `L${startLine}` : `L${startLine}-L${endLine}`;
  const fence = text.includes('```') ? '````' : '```';
  return `${path}:${range}\n${fence}${languageId}\n${text}\n${fence}`;
}

/** A prompt asking to fix a file's diagnostics, one line each. */
export function problemsPrompt(path: string, diagnostics: readonly vscode.Diagnostic[]): string {
  const severity = ['error', 'warning', 'info', 'hint'];
  const lines = diagnostics.map((d) => {
    const source = d.source ? ` [${d.source}${d.code !== undefined ? ` ${typeof d.code === 'object' ? d.code.value : d.code}` : ''}]` : '';
    return `- ${path}:${d.range.start.line + 1}:${d.range.start.character + 1} ${severity[d.severity]}: ${d.message}${source}`;
  });
  return `Fix these problems in ${path}:\n${lines.join('\n')}`;
}

function shownPath(uri: vscode.Uri): string {
  const cwd = sessionCwd();
  const rel = relative(cwd, uri.fsPath);
  return rel && !rel.startsWith('..') ? rel : uri.fsPath;
}

async function sendPrompt(controller: Controller, text?: string): Promise<void> {
  const prompt = text ?? (await vscode.window.showInputBox({ title: 'agentd: Send Prompt', prompt: 'What should the agent do?', ignoreFocusOut: true }));
  if (prompt?.trim()) await controller.prompt(prompt);
}

/** The selection (the cursor's line when empty), without a last line it only touches at column 0. */
function selectedLines(document: vscode.TextDocument, selection: vscode.Selection): vscode.Range {
  if (selection.isEmpty) return document.lineAt(selection.active.line).range;
  if (selection.end.character === 0 && selection.end.line > selection.start.line) {
    return new vscode.Range(selection.start, document.lineAt(selection.end.line - 1).range.end);
  }
  return selection;
}

async function sendSelection(controller: Controller): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return void vscode.window.showWarningMessage('agentd: no editor is active.');
  const range = selectedLines(editor.document, editor.selection);
  const context = selectionContext(
    shownPath(editor.document.uri), editor.document.languageId, range.start.line + 1, range.end.line + 1, editor.document.getText(range),
  );
  const ask = await vscode.window.showInputBox({ title: 'agentd: Send Selection', prompt: 'What should the agent do with it? (optional)', ignoreFocusOut: true });
  if (ask === undefined) return;
  await controller.prompt(ask.trim() ? `${ask.trim()}\n\n${context}` : context);
}

async function fixProblems(controller: Controller): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return void vscode.window.showWarningMessage('agentd: no editor is active.');
  const diagnostics = vscode.languages.getDiagnostics(editor.document.uri);
  if (!diagnostics.length) return void vscode.window.showInformationMessage('agentd: this file has no problems.');
  await controller.prompt(problemsPrompt(shownPath(editor.document.uri), diagnostics));
}

async function cancel(controller: Controller): Promise<void> {
  if (!controller.currentSession) return;
  const result = await controller.request('session/cancel', { sessionId: controller.currentSession });
  const dropped = result.dropped ?? [];
  if (dropped.length) void vscode.window.showInformationMessage(`agentd: cancelled; ${dropped.length} queued message(s) dropped.`);
}

const BUTTONS = {
  rename: { iconPath: new vscode.ThemeIcon('edit'), tooltip: 'Rename' },
  fork: { iconPath: new vscode.ThemeIcon('repo-forked'), tooltip: 'Fork' },
  export: { iconPath: new vscode.ThemeIcon('export'), tooltip: 'Export as Markdown' },
  delete: { iconPath: new vscode.ThemeIcon('trash'), tooltip: 'Delete' },
};

type SessionItem = vscode.QuickPickItem & { session: SessionSummary };

/** One row of the session picker; a subagent's session is indented under its parent's. */
function sessionItem({ session, depth }: NestedSession): SessionItem {
  const indent = depth > 0 ? `${'\u2003'.repeat(depth - 1)}└ ` : '';
  const when = session.updatedAt.replace('T', ' ').slice(0, 16);
  return {
    label: indent + (session.title || session.sessionId),
    description: `${session.running ? '$(sync~spin) ' : ''}${depth > 0 ? 'subagent · ' : ''}${when}`,
    detail: session.cwd,
    buttons: Object.values(BUTTONS),
    session,
  };
}

async function onSessionButton(controller: Controller, item: SessionItem, button: vscode.QuickInputButton): Promise<boolean> {
  const sessionId = item.session.sessionId;
  if (button === BUTTONS.rename) {
    const title = await vscode.window.showInputBox({ title: 'Rename session', value: item.session.title ?? '' });
    if (title !== undefined) await controller.request('session/rename', { sessionId, title });
  } else if (button === BUTTONS.fork) {
    const info = await controller.request('session/fork', { sessionId });
    await controller.showSession(info.sessionId);
    return true;
  } else if (button === BUTTONS.export) {
    const exported = await controller.request('session/export', { sessionId, format: 'markdown' });
    const document = await vscode.workspace.openTextDocument({ content: exported.content, language: 'markdown' });
    await vscode.window.showTextDocument(document);
    return true;
  } else if (button === BUTTONS.delete) {
    const ok = await vscode.window.showWarningMessage(`Delete the session "${item.session.title || sessionId}" and its file?`, { modal: true }, 'Delete');
    if (ok) await controller.request('session/delete', { sessionId, force: true });
  }
  return false;
}

async function openSession(controller: Controller): Promise<void> {
  const pick = vscode.window.createQuickPick<SessionItem>();
  pick.title = 'agentd: Open Session';
  pick.placeholder = 'Sessions, newest first';
  pick.busy = true;
  const load = async () => {
    const page = await controller.request('session/list', { limit: 100 });
    pick.items = nestSessions(page.sessions).map(sessionItem);
    pick.busy = false;
  };
  pick.onDidAccept(() => {
    const chosen = pick.selectedItems[0];
    pick.hide();
    if (chosen) controller.showSession(chosen.session.sessionId).catch((error: unknown) => controller.showError(error));
  });
  pick.onDidTriggerItemButton(({ item, button }) => {
    onSessionButton(controller, item, button).then(
      (close) => (close ? pick.hide() : load()),
      (error: unknown) => controller.showError(error),
    );
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();
  await load().catch((error: unknown) => {
    pick.hide();
    controller.showError(error);
  });
}

export function registerCommands(controller: Controller): vscode.Disposable[] {
  const guarded = (run: () => Promise<unknown>) => () => run().catch((error: unknown) => controller.showError(error));
  return [
    vscode.commands.registerCommand('agentd.newSession', guarded(() => controller.newSession())),
    vscode.commands.registerCommand('agentd.sendPrompt', (text?: string) => sendPrompt(controller, typeof text === 'string' ? text : undefined).catch((error: unknown) => controller.showError(error))),
    vscode.commands.registerCommand('agentd.sendSelection', guarded(() => sendSelection(controller))),
    vscode.commands.registerCommand('agentd.fixProblems', guarded(() => fixProblems(controller))),
    vscode.commands.registerCommand('agentd.cancel', guarded(() => cancel(controller))),
    vscode.commands.registerCommand('agentd.openSession', guarded(() => openSession(controller))),
    vscode.commands.registerCommand('agentd.showLog', () => controller.output.show(true)),
  ];
}
