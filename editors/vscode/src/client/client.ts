/**
 * The protocol client: one child process (`agentctl bridge` or `agentd serve --stdio`) spoken to
 * with vscode-jsonrpc (Content-Length framing). Imports nothing from `vscode`.
 *
 * Contract:
 * - Nothing is spawned until the first `request()` (or `start()`).
 * - `initialize` declares `capabilities.permissions`, so the daemon sends
 *   `session/requestPermission`; the handler set with `onPermission` answers it (or returns null
 *   when the question was settled elsewhere: the request is then answered with -32800).
 * - The sessions this connection follows (created, loaded, prompted or subscribed here) are
 *   remembered with the last `seq` seen. When the process dies unexpectedly it is restarted
 *   with exponential backoff and every followed session is re-attached with
 *   `session/subscribe {sinceSeq}`; when the daemon cannot replay from there (`complete:
 *   false`, or a new daemon whose sequence restarted) `onResync` fires so the UI reloads it.
 * - Requests pending when the process dies reject with code -32008 (ConnectionLost).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  type CancellationToken,
  createMessageConnection,
  type MessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import {
  type ClientMethods,
  ErrorCodes,
  PROTOCOL_VERSION,
  type ReadTextFileParams,
  type ReadTextFileResult,
  type RequestPermissionParams,
  type RequestPermissionResult,
  type SessionEvent,
  type WriteTextFileParams,
  type AskQuestionParams,
  type AskQuestionResult,
} from '../protocol';
import { AgentdError, toAgentdError } from './errors';
import type { Launch } from './launch';

export type ClientState = 'stopped' | 'starting' | 'live' | 'restarting' | 'failed';

export type PermissionHandler = (
  params: RequestPermissionParams,
  signal: AbortSignal,
) => Promise<RequestPermissionResult | null>;

/** Shows the daemon's questions (`session/askQuestion`); null: answered elsewhere. */
export type QuestionHandler = (params: AskQuestionParams, signal: AbortSignal) => Promise<AskQuestionResult | null>;

/**
 * Serves the daemon's `fs/readTextFile` and `fs/writeTextFile` (declared as `capabilities.fs`),
 * so the file tools of followed sessions see the editor's buffers and write through it. A
 * rejection becomes the tool's error.
 */
export interface FileHandler {
  read(params: ReadTextFileParams): Promise<ReadTextFileResult>;
  write(params: WriteTextFileParams): Promise<void>;
}

export interface RestartPolicy {
  /** First delay before a restart; doubled per consecutive failure. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Consecutive failed starts after which the client gives up (state `failed`). */
  maxAttempts: number;
  /** A process that stayed up this long resets the failure count. */
  stableAfterMs: number;
}

export interface ClientOptions {
  /** Resolved again at every start, so a changed setting applies to the next process. */
  launch: () => Launch;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  clientName?: string;
  clientVersion?: string;
  /** Lines of the child's stderr and the client's own notes (for an Output channel). */
  log?: (line: string) => void;
  restart?: Partial<RestartPolicy>;
  /** When given, the client declares `capabilities.fs` and serves file requests with it. */
  files?: FileHandler;
}

const DEFAULT_RESTART: RestartPolicy = {
  initialDelayMs: 250,
  maxDelayMs: 8000,
  maxAttempts: 6,
  stableAfterMs: 10_000,
};

type Params<M extends keyof ClientMethods> = ClientMethods[M]['params'];
type Result<M extends keyof ClientMethods> = ClientMethods[M]['result'];
type Listener<T> = (value: T) => void;

/** Methods whose success means this connection now receives the session's events. */
const FOLLOWS = new Set(['session/new', 'session/load', 'session/prompt', 'session/subscribe', 'session/fork']);
/** Methods after which the session's events no longer come here. */
const UNFOLLOWS = new Set(['session/unsubscribe', 'session/close', 'session/delete']);

export class AgentdClient {
  private child: ChildProcess | null = null;
  private connection: MessageConnection | null = null;
  private starting: Promise<MessageConnection> | null = null;
  private stateValue: ClientState = 'stopped';
  private disposed = false;
  private failures = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private readonly policy: RestartPolicy;
  private readonly followed = new Map<string, number>();
  private readonly eventListeners: Listener<SessionEvent>[] = [];
  private readonly stateListeners: Listener<ClientState>[] = [];
  private readonly resyncListeners: Listener<string>[] = [];
  private permissionHandler: PermissionHandler | null = null;
  private questionHandler: QuestionHandler | null = null;

  constructor(private readonly options: ClientOptions) {
    this.policy = { ...DEFAULT_RESTART, ...options.restart };
  }

  get state(): ClientState {
    return this.stateValue;
  }

  /** The pid of the spawned process (the bridge in shared mode), if one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Sessions followed by this connection, with the last seq seen. */
  get sessions(): ReadonlyMap<string, number> {
    return this.followed;
  }

  onEvent(listener: Listener<SessionEvent>): void {
    this.eventListeners.push(listener);
  }

  onState(listener: Listener<ClientState>): void {
    this.stateListeners.push(listener);
  }

  /** Called with a session id whose events could not be replayed after a reconnect. */
  onResync(listener: Listener<string>): void {
    this.resyncListeners.push(listener);
  }

  onPermission(handler: PermissionHandler): void {
    this.permissionHandler = handler;
  }

  onQuestion(handler: QuestionHandler): void {
    this.questionHandler = handler;
  }

  /** Spawn and initialize the process unless that is done or under way. */
  start(): Promise<MessageConnection> {
    if (this.disposed) return Promise.reject(new AgentdError('the client was disposed', ErrorCodes.ConnectionLost));
    if (this.connection) return Promise.resolve(this.connection);
    if (!this.starting) {
      this.failures = this.stateValue === 'failed' ? 0 : this.failures;
      this.setState(this.stateValue === 'restarting' ? 'restarting' : 'starting');
      const attempt: Promise<MessageConnection> = this.spawnAndInitialize().finally(() => {
        if (this.starting === attempt) this.starting = null;
      });
      this.starting = attempt;
    }
    return this.starting;
  }

  /** Call a daemon method; starts the daemon on first use. Rejects with AgentdError. */
  async request<M extends keyof ClientMethods>(method: M, params: Params<M>): Promise<Result<M>> {
    const connection = await this.start();
    try {
      const result = (await connection.sendRequest(method, params)) as Result<M>;
      this.track(method, params, result);
      return result;
    } catch (error) {
      throw toAgentdError(error);
    }
  }

  /** Stop the process for good: no restart. Resolves when it has exited. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    this.connection?.dispose();
    this.connection = null;
    this.setState('stopped');
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGTERM'), 2000);
    await exited;
    clearTimeout(timer);
  }

  private setState(state: ClientState): void {
    if (state === this.stateValue) return;
    this.stateValue = state;
    for (const listener of this.stateListeners) listener(state);
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  private track(method: string, params: unknown, result: unknown): void {
    const sessionId =
      method === 'session/new' || method === 'session/fork'
        ? (result as { sessionId: string }).sessionId
        : (params as { sessionId?: string }).sessionId;
    if (!sessionId) return;
    if (FOLLOWS.has(method) && !this.followed.has(sessionId)) this.followed.set(sessionId, 0);
    if (method === 'session/subscribe') {
      this.followed.set(sessionId, Math.max(this.followed.get(sessionId) ?? 0, (result as { lastSeq: number }).lastSeq));
    }
    if (UNFOLLOWS.has(method)) this.followed.delete(sessionId);
  }

  private async spawnAndInitialize(): Promise<MessageConnection> {
    const launch = this.options.launch();
    this.log(`starting ${launch.label}: ${launch.file} ${launch.args.join(' ')}`);
    const child = spawn(launch.file, launch.args, {
      cwd: this.options.cwd,
      env: this.options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    const startedAt = Date.now();
    const spawnFailed = new Promise<never>((_, reject) => {
      child.once('error', (error) => reject(new AgentdError(`cannot start ${launch.label}: ${error.message}`, ErrorCodes.ConnectionLost)));
    });
    spawnFailed.catch(() => {});
    this.pipeStderr(child);
    const connection = this.connect(child);
    child.once('exit', (code, signal) => this.onExit(child, connection, startedAt, code, signal));
    try {
      await Promise.race([spawnFailed, this.initialize(connection)]);
    } catch (error) {
      connection.dispose();
      if (!child.killed) child.kill('SIGTERM');
      throw toAgentdError(error);
    }
    this.connection = connection;
    this.setState('live');
    return connection;
  }

  private pipeStderr(child: ChildProcess): void {
    let pending = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line) this.log(line);
    });
  }

  private connect(child: ChildProcess): MessageConnection {
    if (!child.stdout || !child.stdin) throw new AgentdError('the process has no stdio pipes', ErrorCodes.ConnectionLost);
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    connection.onNotification('session/event', (params: SessionEvent) => this.deliver(params));
    connection.onRequest('session/requestPermission', (params: RequestPermissionParams, token: CancellationToken) =>
      this.answerPermission(params, token),
    );
    connection.onRequest('session/askQuestion', (params: AskQuestionParams, token: CancellationToken) =>
      this.answerQuestion(params, token),
    );
    const files = this.options.files;
    if (files) {
      connection.onRequest('fs/readTextFile', (params: ReadTextFileParams) => this.serveFile(() => files.read(params)));
      connection.onRequest('fs/writeTextFile', (params: WriteTextFileParams) =>
        this.serveFile(async () => {
          await files.write(params);
          return {};
        }),
      );
    }
    connection.onError(([error]) => this.log(`protocol error: ${error.message}`));
    connection.listen();
    return connection;
  }

  private async initialize(connection: MessageConnection): Promise<void> {
    await connection.sendRequest('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: this.options.clientName ?? 'agentd-vscode', version: this.options.clientVersion ?? '0' },
      capabilities: {
        permissions: true,
        questions: true,
        ...(this.options.files ? { fs: { readTextFile: true, writeTextFile: true } } : {}),
      },
    });
  }

  private deliver(params: SessionEvent): void {
    // seq rises within one daemon; after a daemon restart it starts again, so take it as is.
    if (params.seq > 0 && this.followed.has(params.sessionId)) this.followed.set(params.sessionId, params.seq);
    for (const listener of this.eventListeners) listener(params);
  }

  private async answerPermission(params: RequestPermissionParams, token: CancellationToken): Promise<RequestPermissionResult> {
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort());
    const answer = this.permissionHandler ? await this.permissionHandler(params, controller.signal) : null;
    if (!answer) throw new ResponseError(ErrorCodes.RequestCancelled, 'the approval was settled elsewhere');
    return answer;
  }

  private async answerQuestion(params: AskQuestionParams, token: CancellationToken): Promise<AskQuestionResult> {
    const controller = new AbortController();
    token.onCancellationRequested(() => controller.abort());
    // No handler: this client cannot show questions (the daemon then asks others, or tells the
    // agent at once that nobody can answer); null: settled elsewhere meanwhile.
    if (!this.questionHandler) throw new ResponseError(ErrorCodes.MethodNotFound, 'this client shows no questions');
    const answer = await this.questionHandler(params, controller.signal);
    if (!answer) throw new ResponseError(ErrorCodes.RequestCancelled, 'the question was settled elsewhere');
    return answer;
  }

  /** Run a file request; a failure is answered as an error whose message names the cause. */
  private async serveFile<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new ResponseError(ErrorCodes.InternalError, error instanceof Error ? error.message : String(error));
    }
  }

  private onExit(child: ChildProcess, connection: MessageConnection, startedAt: number, code: number | null, signal: string | null): void {
    this.log(`process ${child.pid} exited (${signal ? `signal ${signal}` : `status ${code}`})`);
    connection.dispose();
    if (this.child !== child) return;
    this.child = null;
    this.connection = null;
    this.starting = null; // a start still pending rejects on its own; the next one spawns anew
    if (this.disposed) return;
    this.failures = Date.now() - startedAt >= this.policy.stableAfterMs ? 1 : this.failures + 1;
    if (this.failures > this.policy.maxAttempts) {
      this.log(`giving up after ${this.policy.maxAttempts} failed starts; the next request tries again`);
      this.setState('failed');
      return;
    }
    const delay = Math.min(this.policy.initialDelayMs * 2 ** (this.failures - 1), this.policy.maxDelayMs);
    this.log(`restarting in ${delay} ms`);
    this.setState('restarting');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.start().then(
        () => this.reattach(),
        (error) => this.log(`restart failed: ${toAgentdError(error).message}`),
      );
    }, delay);
  }

  /** Re-subscribe every followed session from the last seq seen. */
  private async reattach(): Promise<void> {
    for (const [sessionId, sinceSeq] of [...this.followed]) {
      try {
        const result = await this.request('session/subscribe', { sessionId, sinceSeq });
        const gap = !result.complete || result.lastSeq < sinceSeq;
        this.log(`re-attached ${sessionId} since seq ${sinceSeq}: ${result.replayed} replayed${gap ? ', resync' : ''}`);
        if (gap) {
          this.followed.set(sessionId, result.lastSeq);
          for (const listener of this.resyncListeners) listener(sessionId);
        }
      } catch (error) {
        this.log(`cannot re-attach ${sessionId}: ${toAgentdError(error).message}`);
        this.followed.delete(sessionId);
      }
    }
  }
}
