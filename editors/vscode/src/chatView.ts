/**
 * The chat view (a webview view in the activity bar). The webview runs the shared chat UI of
 * daemon/agentd/web/ui with a host adapter (src/webview/host.js) that forwards every call here by
 * postMessage; this side answers through the controller's protocol client.
 *
 * Messages, webview → extension: `ready`, `request {id, method, params}`,
 * `serverResponse {id, result}`, `session {sessionId}`, `openDiff {toolCallId, path, diff}`,
 * `openLocation {path, line}`, `confirm {id, question}`.
 * Extension → webview: `init {cwd, sessionId}`, `response {id, result | error}`,
 * `event {params}`, `serverRequest {id, method, params}`, `serverRequestSettled {id}`,
 * `connection {status}`, `confirmed {id, ok}`, `command {name, sessionId?}`.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

export type FromWebview =
  | { type: 'ready' }
  | { type: 'request'; id: number; method: string; params: unknown }
  | { type: 'serverResponse'; id: number; result: unknown }
  | { type: 'session'; sessionId: string | null }
  | { type: 'openDiff'; toolCallId: string; path?: string; diff?: string }
  | { type: 'openLocation'; path: string; line?: number | null }
  | { type: 'confirm'; id: number; question: string };

export type ToWebview =
  | { type: 'init'; cwd: string; sessionId: string | null }
  | { type: 'response'; id: number; result?: unknown; error?: { message: string; code: number } }
  | { type: 'event'; params: unknown }
  | { type: 'serverRequest'; id: number; method: string; params: unknown }
  | { type: 'serverRequestSettled'; id: number }
  | { type: 'connection'; status: string }
  | { type: 'confirmed'; id: number; ok: boolean }
  | { type: 'command'; name: 'newSession' | 'openSession'; sessionId?: string };

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'agentd.chat';
  private view: vscode.WebviewView | null = null;
  private ready = false;
  private readonly queue: ToWebview[] = [];
  private readonly readyWaiters: (() => void)[] = [];
  private readonly registration: vscode.Disposable;
  private readonly hiddenListeners: (() => void)[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (message: FromWebview) => void,
    private readonly initial: () => { cwd: string; sessionId: string | null },
  ) {
    this.registration = vscode.window.registerWebviewViewProvider(ChatView.id, this, {
      webviewOptions: { retainContextWhenHidden: true },
    });
  }

  /** Whether the chat is on screen (else approvals also go to a notification). */
  get visible(): boolean {
    return this.ready && (this.view?.visible ?? false);
  }

  get live(): boolean {
    return this.ready;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.onDidReceiveMessage((message: FromWebview) => this.receive(message));
    view.onDidChangeVisibility(() => {
      if (!view.visible) for (const listener of this.hiddenListeners) listener();
    });
    view.onDidDispose(() => {
      this.view = null;
      this.ready = false;
      for (const listener of this.hiddenListeners) listener();
    });
    view.webview.html = this.html(view.webview, dist);
  }

  /** Called whenever the chat goes out of sight (collapsed, another view, closed). */
  onDidHide(listener: () => void): void {
    this.hiddenListeners.push(listener);
  }

  /** Show the view and wait until its UI runs. */
  async reveal(): Promise<void> {
    if (!this.view?.visible) await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    if (this.ready) return;
    await new Promise<void>((resolve) => this.readyWaiters.push(resolve));
  }

  post(message: ToWebview): void {
    if (this.ready && this.view) void this.view.webview.postMessage(message);
    else if (message.type !== 'event' && message.type !== 'connection') this.queue.push(message);
  }

  private receive(message: FromWebview): void {
    if (message.type === 'ready') {
      this.ready = true;
      void this.view?.webview.postMessage({ type: 'init', ...this.initial() } satisfies ToWebview);
      for (const queued of this.queue.splice(0)) void this.view?.webview.postMessage(queued);
      for (const resolve of this.readyWaiters.splice(0)) resolve();
    }
    this.onMessage(message);
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
    const csp = [
      `default-src 'none'`,
      `style-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>agentd</title>
</head>
<body class="vscode">
<div id="app"></div>
<script type="module" nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.registration.dispose();
  }
}
