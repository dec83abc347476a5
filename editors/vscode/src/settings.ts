/**
 * The extension's settings (`agentd.*`), read fresh at each use.
 *
 * In Restricted Mode (an untrusted workspace) every setting that picks what runs or where the
 * agent's requests go — `connection`, `command`, `extraArgs`, `provider`, `model`,
 * `permissionMode` — is read from the user's settings only (`inspect().globalValue`): a
 * repository's `.vscode/settings.json` cannot choose the executable, its arguments (`--config
 * repo/file.toml`) or the provider. package.json lists the same keys as
 * `restrictedConfigurations`, so the workbench also ignores their workspace values.
 */
import * as vscode from 'vscode';
import type { ConnectionMode, LaunchSettings, SessionNewParams } from './client';

/** The settings a workspace may not set in Restricted Mode (see package.json). */
export const RESTRICTED_SETTINGS = ['connection', 'command', 'extraArgs', 'provider', 'model', 'permissionMode'] as const;
type RestrictedSetting = (typeof RESTRICTED_SETTINGS)[number];

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('agentd');
}

/** `agentd.<key>`: any scope in a trusted workspace, the user's value (or the default) otherwise. */
function setting<T>(key: RestrictedSetting): T | undefined {
  if (vscode.workspace.isTrusted) return config().get<T>(key);
  const scopes = config().inspect<T>(key);
  return scopes?.globalValue ?? scopes?.defaultValue;
}

export function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
}

/** Where new sessions start: the first workspace folder, else the home directory. */
export function sessionCwd(): string {
  return workspaceFolders()[0] ?? process.env.HOME ?? '/';
}

export function launchSettings(): LaunchSettings {
  const connection = setting<string>('connection') === 'stdio' ? 'stdio' : 'shared';
  const extraArgs = setting<unknown>('extraArgs');
  return {
    connection: connection as ConnectionMode,
    command: setting<string>('command') ?? '',
    extraArgs: Array.isArray(extraArgs) ? extraArgs.filter((arg): arg is string => typeof arg === 'string') : [],
    workspaceFolders: workspaceFolders(),
    trusted: vscode.workspace.isTrusted,
    env: process.env,
  };
}

/**
 * The session/new params the extension adds to whatever the UI asks for: provider, model and
 * permission mode from the settings; Restricted Mode (an untrusted workspace) forces read-only.
 */
export function sessionDefaults(): Partial<SessionNewParams> {
  const defaults: Partial<SessionNewParams> = {};
  const provider = setting<string>('provider');
  const model = setting<string>('model');
  const mode = setting<string>('permissionMode');
  if (provider) defaults.provider = provider;
  if (model) defaults.model = model;
  if (mode === 'ask' || mode === 'auto' || mode === 'read-only') defaults.permissionMode = mode;
  if (!vscode.workspace.isTrusted) defaults.permissionMode = 'read-only';
  return defaults;
}
