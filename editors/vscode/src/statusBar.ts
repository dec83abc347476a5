/** The status bar item: idle, running, waiting for approval (or the connection's trouble). */
import * as vscode from 'vscode';
import type { ClientState, SessionEvent } from './client';

export type RunStatus = 'idle' | 'running' | 'approval';

const LABELS: Record<RunStatus, [string, string]> = {
  idle: ['$(hubot) agentd', 'agentd: idle'],
  running: ['$(sync~spin) agentd', 'agentd: running'],
  approval: ['$(bell-dot) agentd: approve?', 'agentd: waiting for approval'],
};

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentd.status', vscode.StatusBarAlignment.Left, 50);
  private run: RunStatus = 'idle';
  private connection: ClientState = 'stopped';
  private readonly waiting = new Set<string>();

  constructor() {
    this.item.name = 'agentd';
    this.item.command = 'agentd.chat.focus';
    this.render();
    this.item.show();
  }

  get status(): RunStatus {
    return this.run;
  }

  /** Follow the run of the session shown in the chat. */
  onEvent(params: SessionEvent, currentSession: string | null): void {
    if (params.sessionId !== currentSession) return;
    const event = params.event;
    if (event.type === 'agent_start') this.run = 'running';
    else if (event.type === 'permission_request') this.waiting.add(event.toolCallId);
    else if (event.type === 'permission_resolved') this.waiting.delete(event.toolCallId);
    else if (event.type === 'agent_end') {
      this.run = 'idle';
      this.waiting.clear();
    } else return;
    if (this.run === 'running' || this.run === 'approval') this.run = this.waiting.size ? 'approval' : 'running';
    this.render();
  }

  /** A session was opened: show its state until its events say otherwise. */
  reset(running: boolean): void {
    this.waiting.clear();
    this.run = running ? 'running' : 'idle';
    this.render();
  }

  onConnection(state: ClientState): void {
    this.connection = state;
    this.render();
  }

  private render(): void {
    const [text, tooltip] = LABELS[this.run];
    const trouble = this.connection === 'restarting' || this.connection === 'failed';
    this.item.text = trouble ? `$(debug-disconnect) agentd: ${this.connection}` : text;
    this.item.tooltip = trouble ? `agentd: daemon ${this.connection} (see agentd: Show Log)` : tooltip;
    this.item.backgroundColor =
      this.run === 'approval' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
