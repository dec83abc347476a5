/**
 * The controller joins the protocol client to the workbench: it answers the chat view's calls,
 * fans session events out to the view, the status bar and the edit tracker, and asks the user
 * for approvals (inline in the chat, plus a notification when the chat is hidden; the first
 * answer wins, and a question settled elsewhere is withdrawn).
 */
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import {
  AgentdClient,
  AgentdError,
  type ApprovalPreview,
  confineToFolders,
  type ClientMethods,
  type RequestPermissionParams,
  type RequestPermissionResult,
  resolveLaunch,
  type SessionEvent,
} from './client';
import { ChatView, type FromWebview } from './chatView';
import { Edits } from './edits';
import { EditorFiles } from './files';
import { launchSettings, sessionCwd, sessionDefaults, workspaceFolders } from './settings';
import { StatusBar } from './statusBar';

type Outcome = RequestPermissionResult['outcome'];

/**
 * The daemon methods the chat webview may call: what the shared chat UI uses (the web API's
 * list, plus subscribing). Anything else (`shutdown`, `session/setPermissionMode`, `daemon/*`…)
 * is refused, so model HTML that got past the sanitiser still cannot steer the daemon.
 */
export const WEBVIEW_METHODS: ReadonlySet<string> = new Set([
  'session/list', 'session/new', 'session/load', 'session/fork', 'session/delete', 'session/rename',
  'session/export', 'session/prompt', 'session/steer', 'session/followUp', 'session/cancel',
  'session/state', 'session/messages', 'session/setModel', 'session/compact', 'session/subscribe',
  'session/unsubscribe', 'models/list', 'session/commands', 'session/rewind', 'session/killProcess',
]);
/** Params the webview may not set: the settings and the editor decide these (`path`: the chat
 * loads sessions by id, never a session file named by the page; `mcpServers`: a server is a
 * command line the daemon would start). */
const WEBVIEW_STRIPPED_PARAMS = ['permissionMode', 'providerEnv', 'baseUrl', 'sandbox', 'systemPrompt', 'tools', 'path', 'mcpServers'];
const OUTCOME_LABELS: [string, Outcome][] = [
  ['Allow once', 'allow_once'],
  ['Allow always', 'allow_always'],
  ['Reject', 'reject_once'],
  ['Reject always', 'reject_always'],
];

/**
 * What the daemon gets of a webview call's params: without the stripped ones, and a `cwd`
 * pinned to the window's workspace folders (symlinks resolved; one outside them, or any cwd in
 * a window without folders, becomes the chat's own cwd), so the page cannot open a session on
 * `/` or `~`.
 */
export async function webviewParams(params: unknown): Promise<Record<string, unknown>> {
  const allowed = { ...(params as Record<string, unknown>) };
  for (const name of WEBVIEW_STRIPPED_PARAMS) delete allowed[name];
  if (typeof allowed.cwd === 'string') {
    allowed.cwd = await confineToFolders(allowed.cwd, workspaceFolders()).catch(() => sessionCwd());
  } else {
    delete allowed.cwd; // null or absent: the daemon's default, never a value the page made up
  }
  return allowed;
}

export class Controller implements vscode.Disposable {
  readonly client: AgentdClient;
  readonly view: ChatView;
  readonly status = new StatusBar();
  readonly edits: Edits;
  /** The session shown in the chat. */
  currentSession: string | null = null;
  private readonly cwds = new Map<string, string>();
  private readonly webviewAnswers = new Map<number, (result: RequestPermissionResult | null) => void>();
  private nextServerRequest = 1;
  /** Approvals not answered yet, and whether a notification was shown for each. */
  private readonly pendingAsks = new Map<number, { params: RequestPermissionParams; notified: boolean; finish: (r: RequestPermissionResult | null) => void }>();

  constructor(
    context: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
  ) {
    const log = (line: string) => output.appendLine(line);
    this.client = new AgentdClient({
      launch: () => resolveLaunch(launchSettings()),
      cwd: sessionCwd(),
      clientName: 'agentd-vscode',
      clientVersion: String(context.extension.packageJSON.version ?? '0'),
      log,
      files: new EditorFiles(log, workspaceFolders),
    });
    this.edits = new Edits(log);
    this.view = new ChatView(
      context.extensionUri,
      (message) => this.fromWebview(message),
      () => ({ cwd: sessionCwd(), sessionId: this.currentSession }),
    );
    this.client.onEvent((params) => this.onEvent(params));
    this.client.onState((state) => {
      this.status.onConnection(state);
      this.view.post({ type: 'connection', status: state === 'live' ? 'live' : state === 'starting' ? 'connecting' : 'offline' });
    });
    this.client.onResync((sessionId) => {
      if (sessionId === this.currentSession) this.view.post({ type: 'command', name: 'openSession', sessionId });
    });
    this.client.onPermission((params, signal) => this.askPermission(params, signal));
    this.view.onDidHide(() => {
      for (const ask of this.pendingAsks.values()) this.notifyPermission(ask);
    });
  }

  /** Call the daemon (starting it on first use); session/new gets the settings' defaults. */
  async request<M extends keyof ClientMethods>(method: M, params: ClientMethods[M]['params']): Promise<ClientMethods[M]['result']> {
    const withDefaults = method === 'session/new' ? { ...(params as object), ...sessionDefaults() } : params;
    const result = await this.client.request(method, withDefaults as ClientMethods[M]['params']);
    if (method === 'session/new' || method === 'session/load' || method === 'session/fork') {
      const info = 'session' in (result as object) ? (result as { session: { sessionId: string; cwd: string } }).session : (result as { sessionId: string; cwd: string });
      this.cwds.set(info.sessionId, info.cwd);
    }
    return result;
  }

  /** Start a session, show it in the chat and return its id. */
  async newSession(): Promise<string> {
    const info = await this.request('session/new', { cwd: sessionCwd() });
    await this.showSession(info.sessionId);
    return info.sessionId;
  }

  /** Open `sessionId` in the chat view. */
  async showSession(sessionId: string): Promise<void> {
    await this.view.reveal();
    this.currentSession = sessionId;
    this.view.post({ type: 'command', name: 'openSession', sessionId });
  }

  /** Prompt the chat's session (a new one when none is open); the run streams into the chat. */
  async prompt(text: string): Promise<void> {
    await this.view.reveal();
    const sessionId = this.currentSession ?? (await this.newSession());
    const state = await this.request('session/state', { sessionId });
    const method = state.status === 'running' ? 'session/followUp' : 'session/prompt';
    this.request(method, { sessionId, text }).catch((error: unknown) => this.showError(error));
  }

  showError(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.output.appendLine(`error: ${message}`);
    void vscode.window.showErrorMessage(`agentd: ${message}`, 'Show Log').then((choice) => {
      if (choice) this.output.show(true);
    });
  }

  private onEvent(params: SessionEvent): void {
    this.view.post({ type: 'event', params });
    this.status.onEvent(params, this.currentSession);
    this.edits.onEvent(params, this.cwds.get(params.sessionId)).catch((error: unknown) => this.output.appendLine(`refresh failed: ${String(error)}`));
  }

  private fromWebview(message: FromWebview): void {
    switch (message.type) {
      case 'request':
        this.answerWebview(message.id, message.method, message.params);
        break;
      case 'serverResponse':
        this.webviewAnswers.get(message.id)?.(message.result as RequestPermissionResult | null);
        break;
      case 'session':
        this.currentSession = message.sessionId;
        if (message.sessionId) this.syncStatus(message.sessionId);
        break;
      case 'openDiff':
        this.edits.openDiff({ ...message, path: this.absolute(message.path) }).catch((error: unknown) => this.showError(error));
        break;
      case 'openLocation':
        this.openLocation(message.path, message.line).catch((error: unknown) => this.showError(error));
        break;
      case 'confirm':
        void vscode.window.showWarningMessage(message.question, { modal: true }, 'OK').then((choice) => {
          this.view.post({ type: 'confirmed', id: message.id, ok: choice === 'OK' });
        });
        break;
      default:
        break;
    }
  }

  private answerWebview(id: number, method: string, params: unknown): void {
    if (!WEBVIEW_METHODS.has(method)) {
      this.output.appendLine(`refused a call of ${method} from the chat view`);
      this.view.post({ type: 'response', id, error: { message: `the chat view may not call ${method}`, code: -32601 } });
      return;
    }
    webviewParams(params).then((allowed) => this.request(method as keyof ClientMethods, allowed as never)).then(
      (result) => this.view.post({ type: 'response', id, result }),
      (error: unknown) => {
        const code = error instanceof AgentdError ? error.code : -32603;
        this.view.post({ type: 'response', id, error: { message: error instanceof Error ? error.message : String(error), code } });
      },
    );
  }

  private syncStatus(sessionId: string): void {
    this.request('session/state', { sessionId }).then(
      (state) => {
        if (sessionId === this.currentSession) this.status.reset(state.status === 'running');
      },
      () => {},
    );
  }

  private absolute(path: string | undefined): string | undefined {
    if (!path || isAbsolute(path)) return path;
    const cwd = (this.currentSession && this.cwds.get(this.currentSession)) || sessionCwd();
    return join(cwd, path);
  }

  /** Open a file at the line; a folder (ls, find) is revealed in the Explorer. */
  private async openLocation(path: string, line?: number | null): Promise<void> {
    const uri = vscode.Uri.file(this.absolute(path) ?? path);
    const stat = await vscode.workspace.fs.stat(uri);
    if (stat.type & vscode.FileType.Directory) {
      await vscode.commands.executeCommand('revealInExplorer', uri);
      return;
    }
    const position = new vscode.Position(Math.max((line ?? 1) - 1, 0), 0);
    await vscode.window.showTextDocument(uri, { selection: new vscode.Range(position, position), preview: true });
  }

  /** Ask in the chat and, while the chat is hidden, in a notification too. First answer wins. */
  private askPermission(params: RequestPermissionParams, signal: AbortSignal): Promise<RequestPermissionResult | null> {
    return new Promise((resolve) => {
      const id = this.nextServerRequest++;
      const finish = (result: RequestPermissionResult | null) => {
        if (!this.pendingAsks.delete(id)) return;
        this.webviewAnswers.delete(id);
        if (result === null) this.view.post({ type: 'serverRequestSettled', id });
        resolve(result);
      };
      const ask = { params, notified: false, finish };
      this.pendingAsks.set(id, ask);
      signal.addEventListener('abort', () => finish(null));
      if (this.view.live) {
        this.webviewAnswers.set(id, finish);
        this.view.post({ type: 'serverRequest', id, method: 'session/requestPermission', params });
      }
      if (!this.view.visible) this.notifyPermission(ask);
    });
  }

  private notifyPermission(ask: { params: RequestPermissionParams; notified: boolean; finish: (r: RequestPermissionResult) => void }): void {
    if (ask.notified) return;
    ask.notified = true;
    const labels = OUTCOME_LABELS.filter(([, outcome]) => ask.params.options.includes(outcome)).map(([label]) => label);
    const summary = describeCall(ask.params.tool, ask.params.args, ask.params.preview);
    void vscode.window.showInformationMessage(`agentd wants to ${summary}`, ...labels).then((choice) => {
      const outcome = OUTCOME_LABELS.find(([label]) => label === choice)?.[1];
      if (outcome) ask.finish({ outcome });
    });
  }

  dispose(): void {
    void this.client.dispose();
    this.view.dispose();
    this.status.dispose();
    this.edits.dispose();
  }
}

/**
 * "run: npm test (in /repo)", "edit src/app.ts (+3 −1)", "write hello.py (new file, 1 line)",
 * "fetch https://…", "use MCP github · create_issue" for the approval notification (from the
 * daemon's preview when there is one).
 */
export function describeCall(tool: string, args: Record<string, unknown>, preview?: ApprovalPreview | null): string {
  if (preview?.kind === 'command') return `run: ${preview.command ?? ''}${preview.cwd ? ` (in ${preview.cwd})` : ''}`;
  if (preview?.kind === 'url') return `fetch ${preview.url ?? ''}`;
  if (preview?.kind === 'mcp') return `use MCP ${preview.server ?? '?'} · ${preview.tool ?? tool}`;
  if (preview?.kind === 'diff') {
    const lines = preview.added ?? 0;
    const size = preview.error ? 'it would fail' : preview.created ? `new file, ${lines} line${lines === 1 ? '' : 's'}` : `+${lines} \u2212${preview.removed ?? 0}`;
    return `${tool} ${preview.path ?? ''} (${size})`;
  }
  if (tool === 'bash' && typeof args.command === 'string') return `run: ${args.command}`;
  if (typeof args.path === 'string') return `${tool} ${args.path}`;
  return `use ${tool}`;
}
