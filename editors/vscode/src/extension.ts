/**
 * Entry point. Activation only registers things: no process is spawned until the first use
 * (opening the chat, or a command that needs the daemon).
 */
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { Controller } from './controller';

export function activate(context: vscode.ExtensionContext): { controller: Controller } {
  const output = vscode.window.createOutputChannel('agentd');
  const controller = new Controller(context, output);
  context.subscriptions.push(output, controller, ...registerCommands(controller));
  return { controller };
}

export function deactivate(): void {
  // The controller is disposed with the context's subscriptions (it stops its process).
}
