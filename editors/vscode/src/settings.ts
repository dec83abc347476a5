/** The extension's settings (`agentd.*`), read fresh at each use. */
import * as vscode from 'vscode';
import type { ConnectionMode, LaunchSettings, SessionNewParams } from './client';

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('agentd');
}

export function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
}

/** Where new sessions start: the first workspace folder, else the home directory. */
export function sessionCwd(): string {
  return workspaceFolders()[0] ?? process.env.HOME ?? '/';
}

export function launchSettings(): LaunchSettings {
  const connection = config().get<string>('connection') === 'stdio' ? 'stdio' : 'shared';
  return {
    connection: connection as ConnectionMode,
    command: config().get<string>('command') ?? '',
    extraArgs: config().get<string[]>('extraArgs') ?? [],
    workspaceFolders: workspaceFolders(),
    env: process.env,
  };
}

/**
 * The session/new params the extension adds to whatever the UI asks for: provider, model and
 * permission mode from the settings; Restricted Mode (an untrusted workspace) forces read-only.
 */
export function sessionDefaults(): Partial<SessionNewParams> {
  const defaults: Partial<SessionNewParams> = {};
  const provider = config().get<string>('provider');
  const model = config().get<string>('model');
  const mode = config().get<string>('permissionMode');
  if (provider) defaults.provider = provider;
  if (model) defaults.model = model;
  if (mode === 'ask' || mode === 'auto' || mode === 'read-only') defaults.permissionMode = mode;
  if (!vscode.workspace.isTrusted) defaults.permissionMode = 'read-only';
  return defaults;
}
