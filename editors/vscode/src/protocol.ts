/* Generated from schemas/protocol.schema.json by scripts/gen-protocol.mjs: do not edit.
 * Regenerate with `npm run gen-protocol`; test/protocol-drift.test.mjs fails on drift. */

/**
 * A finished tool call's details, tagged by `type`.
 */
export type ToolDetails =
  | BashDetails
  | ReadDetails
  | ReadImageDetails
  | WriteDetails
  | EditDetails
  | UndoEditDetails
  | LsDetails
  | FindDetails
  | GrepDetails
  | TaskDetails
  | TodoDetails
  | WebFetchDetails
  | McpDetails
  | ReadNotebookDetails
  | NotebookEditDetails
  | ReadPdfDetails
  | WebSearchDetails
  | SkillDetails
  | LspDetails
  | ProcessDetails
  | ProcessListDetails
  | AskUserDetails
  | ToolErrorDetails;
/**
 * Every agent event, tagged by `type`.
 */
export type Event =
  | AgentStart
  | TurnStart
  | MessageStart
  | MessageUpdate
  | MessageEnd
  | ToolExecutionStart
  | ToolExecutionUpdate
  | ToolExecutionEnd
  | SubagentStart
  | TurnEnd
  | AgentEnd
  | Retry
  | QueueUpdate
  | ErrorEvent
  | PermissionRequest
  | PermissionResolved
  | QuestionRequest
  | QuestionResolved
  | CompactionStart
  | CompactionEnd
  | SessionWarning
  | PlanUpdate
  | HookResult
  | SessionRewound
  | SettingsChanged
  | ProcessStart
  | ProcessOutput
  | ProcessExit;

/**
 * The run ended. Exactly one per run, always the last event of it.
 */
export interface AgentEnd {
  type: 'agent_end';
  stopReason: 'blocked' | 'budget' | 'cancelled' | 'end_turn' | 'error' | 'max_turns';
  turns?: number;
  usage?: Usage;
  cost?: number;
  error?: string | null;
}
/**
 * Token counts and cost (USD) of one or more LLM calls.
 */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  cost?: number;
}
/**
 * A run begins.
 */
export interface AgentStart {
  type: 'agent_start';
}
/**
 * The change or action a tool call asks approval for (fields by ``kind``).
 *
 * ``diff``: ``path`` (relative to the session's cwd when inside it), ``diff`` (unified,
 * ``--- a/PATH``/``+++ b/PATH``; for a created file ``--- /dev/null`` and only its first
 * lines), ``created``, ``added``/``removed`` line counts of the whole change, ``truncated``
 * when the diff shown was cut. ``error`` says why the call would fail as asked (an edit whose
 * ``old_string`` is not in the file, a directory given as the file); then ``diff`` is None.
 * ``old_text``/``new_text`` are the whole file before and after (a created file: no
 * ``old_text``); they ride only on ``session/requestPermission`` and only for files up to
 * 256 KiB (ACP editors show the whole-file diff from them), never in the event stream.
 *
 * ``command``: ``command`` and ``cwd``. ``url``: ``url``. ``mcp``: ``server``, ``tool``,
 * ``arguments``.
 */
export interface ApprovalPreview {
  kind: 'command' | 'diff' | 'mcp' | 'url';
  path?: string | null;
  diff?: string | null;
  created?: boolean;
  added?: number | null;
  removed?: number | null;
  truncated?: boolean;
  error?: string | null;
  oldText?: string | null;
  newText?: string | null;
  command?: string | null;
  cwd?: string | null;
  url?: string | null;
  server?: string | null;
  tool?: string | null;
  arguments?: {
    [k: string]: unknown;
  } | null;
}
/**
 * ``session/askQuestion`` (server → client): ask the user ``questions``; the fields as on
 * the ``question_request`` event.
 */
export interface AskQuestionParams {
  sessionId: string;
  questionId: string;
  questions: Question[];
  source?: 'daemon' | 'mcp' | 'tool';
  toolCallId?: string | null;
  server?: string | null;
  url?: string | null;
}
/**
 * One question: the full ``question``, a short ``header`` (a chip or title, ≤ 40
 * characters), its ``options`` (``ask_user`` always gives 2 to 6; none: only a typed answer,
 * as an MCP form's text field asks); ``multi_select`` lets the user pick several.
 */
export interface Question {
  question: string;
  header?: string;
  /**
   * @maxItems 6
   */
  options:
    | []
    | [QuestionOption]
    | [QuestionOption, QuestionOption]
    | [QuestionOption, QuestionOption, QuestionOption]
    | [QuestionOption, QuestionOption, QuestionOption, QuestionOption]
    | [QuestionOption, QuestionOption, QuestionOption, QuestionOption, QuestionOption]
    | [
        QuestionOption,
        QuestionOption,
        QuestionOption,
        QuestionOption,
        QuestionOption,
        QuestionOption
      ];
  multiSelect?: boolean;
}
/**
 * One choice: its ``label`` (what an answer names) and an optional ``description``.
 */
export interface QuestionOption {
  label: string;
  description?: string | null;
}
/**
 * The client's answer: one :class:`QuestionAnswer` per question, in order; ``answers``
 * null (or absent) when the user declined to answer.
 */
export interface AskQuestionResult {
  answers?: QuestionAnswer[] | null;
}
/**
 * The answer to one question: the labels chosen (one, or several for ``multiSelect``;
 * none when only ``other`` was written) and the free text the user wrote (``other``).
 */
export interface QuestionAnswer {
  selected?: string[];
  other?: string | null;
}
/**
 * ``ask_user`` asked ``questions``: the user's ``answers`` (one per question), or None
 * and ``reason`` when nobody answered (nobody could, the time ran out, declined);
 * ``question_id`` as its ``question_request`` had it (None: no request was made).
 */
export interface AskUserDetails {
  type: 'ask_user';
  questions: Question[];
  answers?: QuestionAnswer[] | null;
  reason?: string | null;
  questionId?: string | null;
}
/**
 * One complete reply of the model. ``error_message`` is set when ``stop_reason`` is error.
 */
export interface AssistantMessage {
  role: 'assistant';
  id: string;
  content: (TextContent | ThinkingContent | ToolCall | ServerToolCall)[];
  provider: string;
  model: string;
  usage?: Usage;
  stopReason?: 'aborted' | 'error' | 'length' | 'stop' | 'tool_use';
  errorMessage?: string | null;
  timestamp?: number;
}
/**
 * A block of plain text; ``citations``: the sources a provider-side search gave for it
 * (assistant text only).
 */
export interface TextContent {
  type: 'text';
  text: string;
  citations?: Citation[];
}
/**
 * A source the model cited for a passage of its text (a provider-side web search's
 * result): the page's ``url`` and ``title`` and the ``cited_text`` it relied on.
 */
export interface Citation {
  url: string;
  title?: string;
  citedText?: string;
}
/**
 * Model reasoning. ``signature`` is the provider's opaque token, sent back unchanged.
 *
 * ``redacted``: the provider sent the reasoning encrypted (Anthropic ``redacted_thinking``);
 * ``thinking`` is then empty and ``signature`` holds the encrypted data, sent back unchanged.
 */
export interface ThinkingContent {
  type: 'thinking';
  thinking: string;
  signature?: string | null;
  redacted?: boolean;
}
/**
 * A tool call issued by the model.
 *
 * ``arguments`` is the decoded JSON object. When the model produced arguments that are not a
 * JSON object, ``arguments`` is empty and ``parse_error`` says what was wrong; the loop then
 * answers the call with an error result instead of running the tool.
 *
 * ``id`` is unique within the session (events, results and clients use it); when the
 * provider's own id for the call was already taken (models repeat ids), the provider's is
 * kept in ``provider_id`` and used only in requests back to that provider.
 */
export interface ToolCall {
  type: 'tool_call';
  id: string;
  name: string;
  arguments?: {
    [k: string]: unknown;
  };
  parseError?: string | null;
  providerId?: string | null;
}
/**
 * A tool the provider ran on its side while replying (its web search): nothing runs
 * here. ``arguments`` as the model gave them, ``result`` the text clients show, ``details``
 * typed for UIs (:class:`WebSearchDetails`), ``is_error`` when the provider's tool failed.
 *
 * ``api`` is the wire format of ``raw``: the provider's own blocks for this call and its
 * result, sent back unchanged to a provider of that format (dropped for any other).
 */
export interface ServerToolCall {
  type: 'server_tool_call';
  id: string;
  name: string;
  arguments?: {
    [k: string]: unknown;
  };
  result?: string;
  isError?: boolean;
  details?: ToolDetails | null;
  api?: string;
  raw?: {
    [k: string]: unknown;
  }[];
}
/**
 * A shell command ran: how it ended, how long it took, where its output went.
 *
 * ``exit_code`` is None when a signal (``signal``, e.g. ``SIGKILL``) or the timeout
 * (``timed_out``) ended it. ``cwd`` is the directory the command ended in. Output over the
 * limits is cut (``truncated``) and the whole of it kept in ``spill_path`` (``total_bytes``
 * long); ``spill_complete`` is false when that file could not hold all of it.
 */
export interface BashDetails {
  type: 'bash';
  command: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  truncated: boolean;
  spillPath: string | null;
  totalBytes: number;
  cwd: string | null;
  spillComplete?: boolean;
}
/**
 * A text file was read: which lines, and where to continue.
 *
 * ``lines`` lines from line ``offset`` of ``path`` (``total_lines`` in the file when known).
 * When the result stops early, ``truncated`` is true and ``next_offset`` is the line to
 * continue from.
 */
export interface ReadDetails {
  type: 'read';
  path: string;
  offset: number;
  lines: number;
  totalLines: number | null;
  truncated?: boolean;
  nextOffset?: number | null;
}
/**
 * An image file was read (``bytes`` long, of type ``mime_type``).
 *
 * ``shown`` is false when the model cannot view images (it was told so instead).
 */
export interface ReadImageDetails {
  type: 'read_image';
  path: string;
  mimeType: string;
  bytes: number;
  shown?: boolean;
}
/**
 * A file was written (``created`` when it did not exist), with the change as a diff.
 *
 * The diff fields are set unless the old or new content was binary or too big to diff (then
 * ``diff_omitted`` is true).
 */
export interface WriteDetails {
  type: 'write';
  path: string;
  created: boolean;
  bytes: number;
  lines: number;
  diff?: string | null;
  firstChangedLine?: number | null;
  added?: number | null;
  removed?: number | null;
  diffOmitted?: boolean;
  diagnostics?: LspDiagnostic[] | null;
}
/**
 * One problem in ``path`` at ``line``:``column`` (the range's start; ``end_line`` and
 * ``end_column`` its end), from the server ``server``; ``code`` and ``source`` as the server
 * gave them.
 */
export interface LspDiagnostic {
  path: string;
  line: number;
  column: number;
  severity: 'error' | 'hint' | 'information' | 'warning';
  message: string;
  endLine?: number | null;
  endColumn?: number | null;
  code?: string | null;
  source?: string | null;
  server?: string | null;
}
/**
 * A file was edited by ``replacements`` exact replacements, with the change as a diff.
 *
 * ``diff`` is unified (``--- a/…``/``+++ b/…``, paths relative to the session's cwd);
 * ``first_changed_line`` is 1-based in the new text.
 */
export interface EditDetails {
  type: 'edit';
  path: string;
  replacements: number;
  diff: string;
  firstChangedLine: number | null;
  added: number;
  removed: number;
  diagnostics?: LspDiagnostic[] | null;
}
/**
 * The last write or edit of a file was undone; ``remaining`` undo steps are left for it.
 *
 * ``deleted``: the file did not exist before that change, so it was removed. The diff fields
 * are set when both sides are text.
 */
export interface UndoEditDetails {
  type: 'undo_edit';
  path: string;
  deleted: boolean;
  remaining: number;
  diff?: string | null;
  firstChangedLine?: number | null;
  added?: number | null;
  removed?: number | null;
  diagnostics?: LspDiagnostic[] | null;
}
/**
 * A directory was listed: it holds ``count`` entries (``truncated``: not all shown).
 */
export interface LsDetails {
  type: 'ls';
  path: string;
  count: number;
  truncated: boolean;
}
/**
 * Paths were found: ``count`` matched (``cut``: the result limit stopped the walk).
 */
export interface FindDetails {
  type: 'find';
  path: string;
  count: number;
  cut: boolean;
}
/**
 * A search ran (with ``backend``): ``matches`` lines in ``files`` files matched.
 *
 * ``cut`` when the result limit stopped the search, ``truncated`` when the output was cut.
 */
export interface GrepDetails {
  type: 'grep';
  path: string;
  backend: 'python' | 'rg';
  matches: number;
  files: number;
  cut: boolean;
  truncated?: boolean;
}
/**
 * A subagent ran: its own session, profile and how its run ended.
 *
 * ``child_session_id`` is the child's session (listed under this one, resumable);
 * ``agent`` the profile it ran; ``description`` the task's title; ``stop_reason``,
 * ``turns``, ``usage`` and ``cost`` are its run's (the parent's run usage includes them).
 */
export interface TaskDetails {
  type: 'task';
  childSessionId: string;
  agent: string;
  description: string;
  stopReason: string;
  turns: number;
  usage: Usage;
  cost: number;
}
/**
 * The agent's plan was written: ``steps`` steps, ``completed`` of them done (the plan
 * itself comes as a ``plan_update`` event).
 */
export interface TodoDetails {
  type: 'todo';
  steps: number;
  completed: number;
}
/**
 * A web page was fetched: the final ``url`` after ``redirects`` redirects, its HTTP
 * ``status`` and ``content_type``, ``bytes`` read, what the model got (``format``:
 * ``markdown`` for converted HTML, ``text`` otherwise), in ``duration_ms``. A result over the
 * limits is cut (``truncated``) with the whole text in ``spill_path``.
 */
export interface WebFetchDetails {
  type: 'web_fetch';
  url: string;
  status: number;
  contentType: string;
  format: 'markdown' | 'text';
  bytes: number;
  redirects: number;
  durationMs: number;
  truncated?: boolean;
  spillPath?: string | null;
}
/**
 * A tool of an MCP server ran: the ``server`` and its ``tool`` (the call's name is
 * ``mcp__<server>__<tool>``), the result's ``structured_content`` as the server sent it,
 * whether the text was cut at the output limits (``truncated``), and the questions the
 * server asked the user meanwhile with their answers (``elicited``, in order).
 */
export interface McpDetails {
  type: 'mcp';
  server: string;
  tool: string;
  structuredContent?: {
    [k: string]: unknown;
  };
  truncated?: boolean;
  elicited?: Elicited[];
}
/**
 * One round of questions an MCP server asked during a call (``elicitation/create``):
 * the ``questions``, the user's ``answers`` (one per question), or None and ``reason``
 * when nobody answered; ``question_id`` as its ``question_request`` had it, and a URL-mode
 * request's ``url``.
 */
export interface Elicited {
  questions: Question[];
  answers?: QuestionAnswer[] | null;
  reason?: string | null;
  questionId?: string | null;
  url?: string | null;
}
/**
 * A Jupyter notebook was read: ``shown`` of its ``cells`` cells from cell ``offset``
 * (1-based), with ``images`` output images sent to the model. When the result stops early,
 * ``truncated`` is true and ``next_offset`` is the cell to continue from.
 */
export interface ReadNotebookDetails {
  type: 'read_notebook';
  path: string;
  cells: number;
  offset: number;
  shown: number;
  images?: number;
  truncated?: boolean;
  nextOffset?: number | null;
}
/**
 * One cell of a notebook was replaced, inserted or deleted.
 *
 * ``index`` is the cell's 1-based position (after the edit for replace and insert, before it
 * for delete), ``cell_id`` its id (None in notebooks older than nbformat 4.5), ``cell_type``
 * its type. ``diff`` is a unified diff of the cell's source (``--- a/PATH#cell``), with
 * ``added``/``removed`` line counts; ``outputs_cleared`` when a code cell's outputs and
 * execution count were dropped by the edit.
 */
export interface NotebookEditDetails {
  type: 'notebook_edit';
  path: string;
  action: 'delete' | 'insert' | 'replace';
  index: number;
  cellId: string | null;
  cellType: string;
  diff: string;
  added: number;
  removed: number;
  cells: number;
  outputsCleared?: boolean;
}
/**
 * A PDF was read: pages ``first`` to ``last`` (1-based) of ``pages``.
 *
 * ``image_pages`` are pages without a text layer: sent as images (``images`` of them) to a
 * vision model, named only for a text model. ``truncated`` when the result stopped before
 * ``last`` of what was asked (limits), with ``next_page`` to continue from.
 */
export interface ReadPdfDetails {
  type: 'read_pdf';
  path: string;
  pages: number;
  first: number;
  last: number;
  imagePages?: number[];
  images?: number;
  truncated?: boolean;
  nextPage?: number | null;
}
/**
 * A web search ran on ``backend`` (``searxng``, ``brave``, ``tavily``, or the provider's
 * own server-side search): the ``query``, the ``results`` kept after the domain filters
 * (``filtered`` dropped by them) and how long it took.
 */
export interface WebSearchDetails {
  type: 'web_search';
  query: string;
  backend: string;
  results: WebSearchHit[];
  filtered?: number;
  durationMs?: number;
}
/**
 * One search result: its title, URL and a snippet of the page.
 */
export interface WebSearchHit {
  title: string;
  url: string;
  snippet?: string;
}
/**
 * A skill was loaded: its ``name``, the folder it lives in (``path``), where it was found
 * (``source``: ``user`` or ``project``), and the tools it narrows the session to while it is
 * followed (``allowed_tools``; None: no narrowing).
 */
export interface SkillDetails {
  type: 'skill';
  name: string;
  path: string;
  source: string;
  allowedTools?: string[] | null;
}
/**
 * An ``lsp`` call: which ``operation`` on which ``path`` (and position), answered by the
 * server ``server``. ``items`` are the places of the answer (``total`` of them; ``truncated``
 * when the list was cut); ``hover`` the hover text; ``diagnostics`` the file's problems
 * (``diagnostics``) or those a rename introduced; ``changes`` the files a rename changed.
 */
export interface LspDetails {
  type: 'lsp';
  operation:
    | 'definition'
    | 'diagnostics'
    | 'document_symbols'
    | 'hover'
    | 'implementation'
    | 'incoming_calls'
    | 'outgoing_calls'
    | 'references'
    | 'rename'
    | 'workspace_symbols';
  server: string | null;
  path?: string | null;
  line?: number | null;
  column?: number | null;
  items?: LspItem[];
  total?: number;
  truncated?: boolean;
  hover?: string | null;
  diagnostics?: LspDiagnostic[] | null;
  changes?: LspFileChange[];
  durationMs?: number;
}
/**
 * One place an answer names: a location, a symbol, a caller or callee. ``name`` and
 * ``kind`` for symbols and calls (``function``, ``class``…); ``text`` the source line.
 */
export interface LspItem {
  path: string;
  line: number;
  column: number;
  name?: string | null;
  kind?: string | null;
  text?: string | null;
}
/**
 * One file a rename changed: ``edits`` text edits, as a unified diff.
 */
export interface LspFileChange {
  path: string;
  edits: number;
  diff: string;
}
/**
 * A background process as a tool call left it (``bash`` with ``background``,
 * ``process_output``, ``process_kill``): its state now; ``skipped_bytes`` of output not
 * returned (more than the result limits since the last read: the spill file has it).
 */
export interface ProcessDetails {
  type: 'process';
  process: ProcessInfo;
  skippedBytes?: number;
}
/**
 * One background process of a session.
 *
 * ``id`` is ``p1``, ``p2``… (unique in the session); ``pid`` the shell's process id;
 * ``started_at``/``ended_at`` are Unix times in seconds (``ended_at`` None while it runs);
 * ``runtime_ms`` how long it ran (so far); ``output_bytes`` how much it printed (stdout and
 * stderr merged); ``spill_path`` the file holding its output from the first byte (at most
 * the spill cap); ``tail`` its last lines (at most 2 KB); ``tool_call_id`` the ``bash`` call
 * that started it.
 */
export interface ProcessInfo {
  id: string;
  command: string;
  pid: number;
  state: 'exited' | 'killed' | 'running';
  startedAt: number;
  runtimeMs: number;
  outputBytes: number;
  description?: string | null;
  exitCode?: number | null;
  signal?: string | null;
  endedAt?: number | null;
  spillPath?: string | null;
  tail?: string;
  toolCallId?: string;
}
/**
 * ``process_list``: every background process of the session.
 */
export interface ProcessListDetails {
  type: 'process_list';
  processes: ProcessInfo[];
}
/**
 * A call of any tool failed (its result has ``isError``); ``error`` says how.
 */
export interface ToolErrorDetails {
  type: 'error';
  error: 'invalid_arguments' | 'os_error' | 'tool_error';
}
/**
 * ``session/cancel``: whether a run was stopped, and the queued messages dropped.
 */
export interface CancelResult {
  cancelled: boolean;
  dropped?: string[];
}
/**
 * What the client can do. ``permissions``: it answers ``session/requestPermission``;
 * ``questions``: it shows ``session/askQuestion`` to a user who can answer (leave it false
 * when nobody is there: the ``ask_user`` tool then returns at once);
 * ``fs``: the file tools of its sessions read and write through it (see ``fs/readTextFile``).
 */
export interface ClientCapabilities {
  permissions?: boolean;
  questions?: boolean;
  fs?: FileAccessCapabilities;
}
/**
 * The client serves ``fs/readTextFile`` / ``fs/writeTextFile`` (an editor: its buffers).
 */
export interface FileAccessCapabilities {
  readTextFile?: boolean;
  writeTextFile?: boolean;
}
/**
 * Who the client is (for logs and ``daemon/status``).
 */
export interface ClientInfo {
  name: string;
  version?: string | null;
}
/**
 * One custom command: its ``name`` (typed as ``/name``), what it does, the hint for its
 * arguments (None: it takes none worth naming) and where it was read from (``project``:
 * the project's ``.agentd/commands/``, ``user``: ``$XDG_CONFIG_HOME/agentd/commands/``).
 */
export interface CommandInfo {
  name: string;
  description: string;
  argumentHint: string | null;
  source: 'project' | 'user';
}
/**
 * ``session/compact``: summarise older messages, keeping recent context.
 */
export interface CompactParams {
  sessionId: string;
  instructions?: string | null;
}
/**
 * What compaction did.
 */
export interface CompactResult {
  compacted: boolean;
  tokensBefore?: number;
  tokensAfter?: number;
  summary?: string | null;
}
/**
 * Compaction finished; ``summary`` replaces the messages before ``first_kept_entry_id``.
 */
export interface CompactionEnd {
  type: 'compaction_end';
  reason: 'manual' | 'overflow' | 'threshold';
  summary?: string | null;
  tokensBefore?: number;
  firstKeptEntryId?: string | null;
  error?: string | null;
}
/**
 * Older messages are being summarised (``reason``: manual, threshold or overflow).
 */
export interface CompactionStart {
  type: 'compaction_start';
  reason: 'manual' | 'overflow' | 'threshold';
}
/**
 * The daemon now and since it started. Counts cover every run, subagents' included.
 *
 * ``queue_depth``: frames waiting in the JSON-RPC connections' outbound queues;
 * ``queued_messages``: steering and follow-up texts waiting for their run;
 * ``loop_lag_ms`` / ``loop_lag_max_ms``: how late the event loop ran at the last probe and
 * at worst over the last minute (probed from the first metrics request on: 0 before);
 * ``bytes_out``: bytes written to JSON-RPC clients; ``errors``: by type (the ``error``
 * events' codes: ``provider_error``, ``store_error``, ``internal_error``; and
 * ``rpc_internal_error``, requests answered -32603); ``telemetry``: OpenTelemetry export is
 * on.
 */
export interface DaemonMetricsResult {
  uptimeS: number;
  connections: number;
  sessionsLoaded: number;
  runsActive: number;
  runsStarted: number;
  runsEnded?: {
    [k: string]: number;
  };
  queueDepth?: number;
  queuedMessages?: number;
  approvalsPending?: number;
  approvals?: number;
  approvalWaitS?: number;
  loopLagMs?: number;
  loopLagMaxMs?: number;
  bytesOut?: number;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  toolCalls?: number;
  toolErrors?: number;
  errors?: {
    [k: string]: number;
  };
  telemetry?: boolean;
}
/**
 * ``daemon/status``: liveness, load, the protections in force, the MCP servers.
 */
export interface DaemonStatusResult {
  version: string;
  pid: number;
  uptimeS: number;
  connections: number;
  sessions: string[];
  transport: string;
  security?: SecurityStatus | null;
  mcpServers?: McpServerInfo[];
  languageServers?: LanguageServerInfo[];
}
/**
 * What protects this daemon and its tools on this machine.
 *
 * ``dumpable``: false when same-uid processes cannot read the daemon's memory or
 * environment (``prctl(PR_SET_DUMPABLE, 0)``). ``openat2``: file tools open paths with
 * ``RESOLVE_BENEATH`` (else a symlink-refusing walk). ``landlock_abi``: the kernel's
 * Landlock version, 0 when bash cannot be confined under ``sandbox = "workspace"``.
 */
export interface SecurityStatus {
  dumpable: boolean;
  openat2: boolean;
  landlockAbi: number;
}
/**
 * One MCP server as the daemon sees it. ``source``: ``config`` (the user file),
 * ``project`` (a trusted project's ``.agentd.toml``), ``mcp.json`` (the project's
 * ``.mcp.json``) or ``session`` (given with ``session/new``). ``target`` is the command line
 * or URL; ``tools`` the names offered to the model (``mcp__NAME__TOOL``) once it ran;
 * ``error`` why it failed; ``sessions`` how many loaded sessions use it.
 */
export interface McpServerInfo {
  name: string;
  source: string;
  state: 'disabled' | 'failed' | 'running' | 'starting' | 'stopped' | 'untrusted';
  target: string;
  cwd?: string | null;
  tools?: string[];
  error?: string | null;
  sessions?: number;
  check?: McpServerCheck | null;
}
/**
 * A check of one server (``mcp/list`` with ``check``): a new connection that started it
 * (or reached it), ran ``initialize`` and listed its tools, then stopped. ``ok``: it did;
 * ``tools``: the names offered to the model; ``error``: why not; ``login``: it wants the
 * user to sign in (``agentctl mcp login NAME``); ``seconds``: how long the check took.
 */
export interface McpServerCheck {
  ok: boolean;
  tools: string[];
  error: string | null;
  login: boolean;
  seconds: number;
}
/**
 * One language server process the daemon runs for the ``lsp`` tool and the diagnostics
 * after edits: its definition ``name`` and ``command``, the project ``root`` it serves, its
 * ``state``, ``pid`` while it runs, ``open_documents``, how often it was ``restarts``ed and
 * its ``last_error`` (why it crashed or could not start).
 */
export interface LanguageServerInfo {
  name: string;
  command: string;
  root: string;
  state: 'crashed' | 'indexing' | 'not_started' | 'ready' | 'starting' | 'stopped';
  pid?: number | null;
  openDocuments?: number;
  restarts?: number;
  lastError?: string | null;
}
/**
 * Params of a method that takes none (a missing ``params`` member decodes to this).
 */
export interface Empty {}
/**
 * Something went wrong that the client should show (a failed run: just before agent_end).
 *
 * A run that fails sends one just before its ``agent_end`` (same message as its ``error``),
 * ``code`` saying whose failure it was: ``provider_error`` (the LLM call failed: retries
 * exhausted, a refused request, a cut stream, context overflow), ``store_error`` (the
 * session file could not be written: a full disk) or ``internal_error`` (a daemon bug;
 * details in the daemon log).
 */
export interface ErrorEvent {
  type: 'error';
  message: string;
  code?: string;
}
/**
 * A hook that blocked something (its ``hook_result`` with decision ``block``), placed in
 * the conversation: it came after the message ``after_message_id`` (None: before the
 * first message). ``entry_id`` is its session entry.
 */
export interface HookBlock {
  entryId: string;
  afterMessageId: string | null;
  hook: HookResult;
}
/**
 * A configured hook ran (recorded in the session file too).
 *
 * ``decision``: ``allow`` (exit 0, the run goes on, maybe with added context), ``block``
 * (exit 2 or ``{"decision": "block"}``: a ``pre_tool`` call fails, a ``user_prompt`` ends
 * the run with stop reason ``blocked``), ``error`` (another exit code, a crash or a timeout:
 * the run goes on, ``reason`` says what went wrong). ``exit_code`` is None when the hook
 * was killed (timeout, signal). ``tool``/``tool_call_id`` name the call of a ``pre_tool`` or
 * ``post_tool`` hook.
 */
export interface HookResult {
  type: 'hook_result';
  event: 'post_tool' | 'pre_compact' | 'pre_tool' | 'session_start' | 'stop' | 'user_prompt';
  command: string;
  exitCode: number | null;
  decision: 'allow' | 'block' | 'error';
  durationMs: number;
  reason?: string | null;
  tool?: string | null;
  toolCallId?: string | null;
  timedOut?: boolean;
}
/**
 * An image, base64-encoded.
 */
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}
/**
 * First call on every connection (``daemon/status`` is the only call allowed before it).
 *
 * ``token`` is required on TCP connections; Unix-socket and stdio peers are trusted.
 */
export interface InitializeParams {
  protocolVersion?: number;
  clientInfo?: ClientInfo | null;
  capabilities?: ClientCapabilities;
  token?: string | null;
}
/**
 * The daemon's answer to ``initialize``.
 */
export interface InitializeResult {
  protocolVersion: number;
  serverInfo: ServerInfo;
  capabilities: ServerCapabilities;
}
/**
 * The daemon's name and version.
 */
export interface ServerInfo {
  name: string;
  version: string;
}
/**
 * What this daemon offers.
 */
export interface ServerCapabilities {
  framings?: string[];
  events?: boolean;
  permissions?: boolean;
  questions?: boolean;
  images?: boolean;
}
/**
 * ``session/killProcess``: end the background process ``process_id`` of ``session_id``
 * (SIGTERM to its process group and everything it started, SIGKILL after the grace
 * period). Answers when it has ended; an ended process is answered as it is.
 */
export interface KillProcessParams {
  sessionId: string;
  processId: string;
}
/**
 * A file position a tool call touches (1-based line), for editors to show.
 */
export interface Location {
  path: string;
  line?: number | null;
}
/**
 * ``mcp/list``: the MCP servers configured for ``cwd`` (default: the daemon's own cwd)
 * and those the daemon runs; with ``check``, each configured (enabled, trusted) server is
 * also checked, all at once, each within its start-up timeout.
 */
export interface McpListParams {
  cwd?: string | null;
  check?: boolean;
}
/**
 * ``mcp/list``: configured servers (with the state of their process for ``cwd``), then
 * running ones of other folders and sessions.
 */
export interface McpListResult {
  servers: McpServerInfo[];
}
/**
 * ``mcp/loginFinish``: wait for the login ``login_id`` (of ``mcp/login``) to end.
 */
export interface McpLoginFinishParams {
  loginId: string;
}
/**
 * ``mcp/login``: sign in to the streamable HTTP server ``name`` of ``cwd``'s
 * configuration (OAuth). The daemon waits on a loopback redirect for at most ``timeout``
 * seconds from now.
 */
export interface McpLoginParams {
  name: string;
  cwd?: string | null;
  timeout?: number;
}
/**
 * A login: ``authorization_url`` is the page the user opens to approve (None once
 * ``done``, or when the server needed none); ``done``: the tokens are stored (or the server
 * let agentd in as it was) and ``tools`` lists the server's tools; ``url``: the server.
 */
export interface McpLoginResult {
  loginId: string;
  name: string;
  url: string;
  done: boolean;
  authorizationUrl: string | null;
  tools: string[];
}
/**
 * ``mcp/logout``: forget the stored OAuth credentials of the server ``name`` of
 * ``cwd``'s configuration.
 */
export interface McpLogoutParams {
  name: string;
  cwd?: string | null;
}
/**
 * ``removed``: there were credentials for ``url``.
 */
export interface McpLogoutResult {
  name: string;
  url: string;
  removed: boolean;
}
/**
 * An MCP server for one session, as ACP's ``session/new`` writes it: stdio (``command``,
 * ``args``, ``env``) or, with ``type: "http"``, streamable HTTP (``url``, ``headers``).
 * ``sse`` servers are refused.
 */
export interface McpServerParam {
  name: string;
  type?: ('http' | 'sse' | 'stdio') | null;
  command?: string | null;
  args?: string[];
  env?: NameValue[];
  url?: string | null;
  headers?: NameValue[];
}
/**
 * One environment variable or HTTP header.
 */
export interface NameValue {
  name: string;
  value: string;
}
/**
 * The complete message, as stored in the session.
 */
export interface MessageEnd {
  type: 'message_end';
  message: UserMessage | AssistantMessage | ToolResultMessage;
}
/**
 * A prompt, steering or follow-up message from the user.
 *
 * ``command``: the custom command the user typed (``/review a.py``) when ``content`` is its
 * expansion (what the model reads); clients show the command, the expansion on demand.
 */
export interface UserMessage {
  role: 'user';
  id: string;
  content: (TextContent | ImageContent)[];
  timestamp: number;
  command?: string | null;
}
/**
 * The result of one tool call. ``content`` is what the model sees; ``details`` is for UIs.
 */
export interface ToolResultMessage {
  role: 'tool_result';
  id: string;
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  isError?: boolean;
  details?: ToolDetails | null;
  timestamp?: number;
}
/**
 * A message begins. For assistant messages ``message_update`` deltas follow.
 */
export interface MessageStart {
  type: 'message_start';
  messageId: string;
  role: 'assistant' | 'tool_result' | 'user';
}
/**
 * One delta of the assistant message opened by the session's last ``message_start``.
 *
 * One assistant message streams at a time per session, so its id is not repeated here.
 */
export interface MessageUpdate {
  type: 'message_update';
  delta: TextDelta | ThinkingDelta | ToolCallStartDelta | ToolCallDelta;
}
/**
 * More text for content block ``index`` of the assistant message.
 */
export interface TextDelta {
  type: 'text_delta';
  index?: number;
  text: string;
}
/**
 * More reasoning text for content block ``index``.
 */
export interface ThinkingDelta {
  type: 'thinking_delta';
  index?: number;
  text: string;
}
/**
 * A tool call begins at content block ``index``.
 */
export interface ToolCallStartDelta {
  type: 'toolcall_start';
  index?: number;
  id: string;
  name: string;
}
/**
 * A raw chunk of the JSON arguments string of the tool call at ``index``.
 */
export interface ToolCallDelta {
  type: 'toolcall_delta';
  index?: number;
  arguments: string;
}
/**
 * ``session/messages``: one page of the conversation on the current branch, oldest
 * message first.
 *
 * ``before``: the branch index (0-based) just past the page (default: the end, so the newest
 * page); ``limit``: most messages in the page (1 to 1000; default 1000). A page also stops
 * before it would pass 2 MiB of JSON (it always holds one message at least).
 */
export interface MessagesParams {
  sessionId: string;
  limit?: number;
  before?: number | null;
}
/**
 * ``session/messages``: a page of the conversation on the session's current branch.
 *
 * ``start`` is the branch index of ``messages[0]`` and ``total`` the branch's length: while
 * ``start`` is above 0, ``before: start`` asks for the page before this one. ``hook_blocks``:
 * the hooks that blocked a prompt or a tool call among this page's messages (each placed
 * after one of them, or before the first message on the first page), so a reopened chat
 * shows them where they happened.
 */
export interface MessagesResult {
  messages: (UserMessage | AssistantMessage | ToolResultMessage)[];
  start: number;
  total: number;
  hookBlocks?: HookBlock[];
}
/**
 * One configured model.
 */
export interface ModelInfo {
  provider: string;
  model: string;
  contextWindow?: number | null;
}
/**
 * ``models/list``: the models the configuration for ``cwd`` offers (the project's
 * ``.agentd.toml`` above it, the user file, the environment); without ``cwd``, the daemon's
 * own working directory. ``providerEnv`` as for ``session/new``.
 */
export interface ModelsListParams {
  cwd?: string | null;
  providerEnv?: {
    [k: string]: string;
  } | null;
}
/**
 * ``models/list``.
 */
export interface ModelsListResult {
  models: ModelInfo[];
  defaultProvider?: string | null;
  defaultModel?: string | null;
}
/**
 * A plain acknowledgement.
 */
export interface OkResult {
  ok?: boolean;
}
/**
 * ``POST /api/permission/answer``: the user's choice for a pending tool call.
 *
 * The result is ``{"ok": false}`` when the request was already settled (another client
 * answered first, the run was cancelled, or it timed out).
 */
export interface PermissionAnswerParams {
  sessionId: string;
  toolCallId: string;
  outcome: 'allow_always' | 'allow_always_project' | 'allow_once' | 'reject_always' | 'reject_once';
}
/**
 * A tool call waits for approval (sent as ``session/requestPermission`` to clients).
 *
 * ``preview`` shows what the call would do (:class:`ApprovalPreview`, without the whole
 * file texts); ``always_rule`` is the rule an ``allow_always`` answer adds for the session
 * (e.g. ``bash(npm test:*)``, ``edit``) and ``allow_always_project`` also keeps for the
 * session's folder in the user's config, for the labels of those choices.
 */
export interface PermissionRequest {
  type: 'permission_request';
  toolCallId: string;
  tool: string;
  args: {
    [k: string]: unknown;
  };
  options?: (
    'allow_always' | 'allow_always_project' | 'allow_once' | 'reject_always' | 'reject_once'
  )[];
  preview?: ApprovalPreview | null;
  alwaysRule?: string | null;
}
/**
 * The approval for ``tool_call_id`` was decided (by a client, a rule or a timeout).
 */
export interface PermissionResolved {
  type: 'permission_resolved';
  toolCallId: string;
  outcome: 'allow_always' | 'allow_always_project' | 'allow_once' | 'reject_always' | 'reject_once';
  reason?: string | null;
}
/**
 * One step of the agent's plan (the ``todo`` tool): what, how far, how important
 * (every field always present).
 */
export interface PlanItem {
  content: string;
  status?: 'completed' | 'in_progress' | 'pending';
  priority?: 'high' | 'low' | 'medium';
}
/**
 * The agent's plan changed; ``entries`` is the whole plan now (replace what was shown).
 *
 * Sent when the model calls the ``todo`` tool (just before that call's
 * ``tool_execution_end``), and to a client loading a session with ``replay``, after the
 * messages. An empty list clears the plan.
 */
export interface PlanUpdate {
  type: 'plan_update';
  entries?: PlanItem[];
}
/**
 * A background process ended (on its own or killed); ``process`` as it ended.
 */
export interface ProcessExit {
  type: 'process_exit';
  process: ProcessInfo;
}
/**
 * More output of the background process ``id``: at most one event per update interval
 * (like bash's streamed deltas), the middle of a burst dropped (``[… N chars not streamed
 * …]``); the spill file has everything up to its cap.
 */
export interface ProcessOutput {
  type: 'process_output';
  id: string;
  text: string;
}
/**
 * A background process started (its ``bash`` call returns right after). Also sent, with
 * ``seq`` 0, to a client loading the session with ``replay`` for each process it has.
 */
export interface ProcessStart {
  type: 'process_start';
  process: ProcessInfo;
}
/**
 * ``session/processes``: the background processes of ``session_id`` (every loaded
 * session's when absent), running and ended.
 */
export interface ProcessesParams {
  sessionId?: string | null;
}
/**
 * ``session/processes``: one entry per session that has processes (or the one asked).
 */
export interface ProcessesResult {
  sessions: SessionProcesses[];
}
/**
 * The background processes of one session, oldest first.
 */
export interface SessionProcesses {
  sessionId: string;
  processes: ProcessInfo[];
}
/**
 * ``session/prompt``: run the agent on ``text``; resolves when the run ends.
 *
 * ``max_turns`` limits this run only; without it the session's limit applies.
 * ``max_cost`` (US dollars) and ``max_tokens`` (all tokens of the run's model calls) cap its
 * spending: the run stops with ``budget`` before a model call that would pass a cap.
 * ``max_cost`` needs the model's prices (-32005 when they are unknown).
 * ``traceparent`` (a W3C Trace Context header value, ``00-TRACEID-SPANID-FLAGS``) makes the
 * run's telemetry span a child of that span, so a driver (a batch) links the runs it
 * starts to its own trace; ignored while telemetry is off.
 */
export interface PromptParams {
  sessionId: string;
  text: string;
  images?: ImageContent[];
  maxTurns?: number | null;
  maxCost?: number | null;
  maxTokens?: number | null;
  traceparent?: string | null;
}
/**
 * How the run ended. A cancel is ``cancelled``, never an error. ``permissions_refused``
 * lists the tool calls refused permission during the run (the model got the refusal as the
 * call's error result), in order.
 */
export interface PromptResult {
  stopReason: 'blocked' | 'budget' | 'cancelled' | 'end_turn' | 'error' | 'max_turns';
  turns: number;
  usage: Usage;
  cost: number;
  error?: string | null;
  permissionsRefused?: RefusedCall[];
}
/**
 * A tool call of the run that was not allowed to run (the policy or the user refused).
 */
export interface RefusedCall {
  toolCallId: string;
  name: string;
  reason: string;
}
/**
 * ``question/answer``: the user's answers to a pending question of a session (``answers``
 * null: the user declined). The result is ``{"ok": false}`` when it was already settled
 * (another client answered first, the run was cancelled, or it timed out) or an answer does
 * not fit its question.
 */
export interface QuestionAnswerParams {
  sessionId: string;
  questionId: string;
  answers?: QuestionAnswer[] | null;
}
/**
 * The session waits for the user's answer to ``questions`` (sent as
 * ``session/askQuestion`` to the clients that answer questions). ``tool_call_id``: the
 * ``ask_user`` call (or the MCP tool call) that asks; ``server``: the MCP server asking;
 * ``url``: a URL-mode elicitation's address, to open only if the user consents.
 */
export interface QuestionRequest {
  type: 'question_request';
  questionId: string;
  questions: Question[];
  source?: 'daemon' | 'mcp' | 'tool';
  toolCallId?: string | null;
  server?: string | null;
  url?: string | null;
}
/**
 * The question ``question_id`` was settled: ``answers`` (one per question, in order) when
 * the user answered, else None and ``reason`` (declined, nobody could answer, timed out,
 * cancelled).
 */
export interface QuestionResolved {
  type: 'question_resolved';
  questionId: string;
  answers?: QuestionAnswer[] | null;
  reason?: string | null;
}
/**
 * The steering and follow-up queues changed (texts not yet delivered).
 *
 * Each update carries both queues whole; they are capped together (64 texts, 256 KiB), so an
 * update stays small.
 */
export interface QueueUpdate {
  type: 'queue_update';
  steering?: string[];
  followUp?: string[];
}
/**
 * ``fs/readTextFile`` (server → client): the text of ``path`` as the client holds it
 * (an editor: the buffer, unsaved changes included). ``path`` is absolute.
 */
export interface ReadTextFileParams {
  sessionId: string;
  path: string;
}
/**
 * The file's whole text; ``null`` when the client holds no text of it (an editor without
 * a buffer of the file): the daemon reads the disk.
 */
export interface ReadTextFileResult {
  content: string | null;
}
/**
 * ``session/requestPermission`` (server → client): approve a tool call.
 *
 * ``preview`` and ``always_rule`` as on the ``permission_request`` event; here the preview
 * also carries the whole file texts (``oldText``/``newText``) of a small file.
 */
export interface RequestPermissionParams {
  sessionId: string;
  toolCallId: string;
  tool: string;
  args: {
    [k: string]: unknown;
  };
  options: (
    'allow_always' | 'allow_always_project' | 'allow_once' | 'reject_always' | 'reject_once'
  )[];
  preview?: ApprovalPreview | null;
  alwaysRule?: string | null;
}
/**
 * The client's answer: one of the offered options.
 */
export interface RequestPermissionResult {
  outcome: 'allow_always' | 'allow_always_project' | 'allow_once' | 'reject_always' | 'reject_once';
}
/**
 * The provider call failed transiently and is retried after ``delay_ms``.
 */
export interface Retry {
  type: 'retry';
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  error: string;
}
/**
 * A file the rewind left alone: ``reason`` (see :data:`ConflictReason`) and ``message``
 * for people.
 */
export interface RewindConflict {
  path: string;
  reason: 'changed' | 'not_restorable' | 'refused';
  message: string;
}
/**
 * ``session/branch``: move the session's leaf to ``entryId`` inside the same file.
 */
export interface SessionBranchParams {
  sessionId: string;
  entryId: string;
}
/**
 * ``session/commands``: the custom commands of the session ``sessionId``, or (``cwd``
 * instead) those a new session in ``cwd`` would have, for a chat not started yet. Exactly
 * one of the two.
 */
export interface SessionCommandsParams {
  sessionId?: string | null;
  cwd?: string | null;
}
/**
 * ``session/commands``: the session's custom commands, by name, read again on every
 * call; ``warnings``: the files that were skipped and why (an untrusted project's commands,
 * a bad name, an invalid front matter).
 */
export interface SessionCommandsResult {
  commands: CommandInfo[];
  warnings?: string[];
}
/**
 * ``session/delete``: refused while a run is in progress unless ``force``.
 */
export interface SessionDeleteParams {
  sessionId: string;
  force?: boolean;
}
/**
 * Params of the ``session/event`` notification. ``seq`` rises by one per session event.
 *
 * A session's subscribers also receive the events of its subagents' sessions, each under
 * the child's ``session_id`` and numbering, with ``parent_session_id`` naming the session
 * whose ``task`` call started it (absent for a top-level session).
 */
export interface SessionEvent {
  sessionId: string;
  seq: number;
  event:
    | AgentStart
    | TurnStart
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | SubagentStart
    | TurnEnd
    | AgentEnd
    | Retry
    | QueueUpdate
    | ErrorEvent
    | PermissionRequest
    | PermissionResolved
    | QuestionRequest
    | QuestionResolved
    | CompactionStart
    | CompactionEnd
    | SessionWarning
    | PlanUpdate
    | HookResult
    | SessionRewound
    | SettingsChanged
    | ProcessStart
    | ProcessOutput
    | ProcessExit;
  parentSessionId?: string | null;
}
/**
 * Turn ``turn`` (1-based) begins: one LLM call plus the tool calls it asks for.
 */
export interface TurnStart {
  type: 'turn_start';
  turn: number;
}
/**
 * A tool call starts running.
 */
export interface ToolExecutionStart {
  type: 'tool_execution_start';
  toolCallId: string;
  name: string;
  args: {
    [k: string]: unknown;
  };
  kind?: 'edit' | 'execute' | 'other' | 'read' | 'search';
  locations?: Location[];
}
/**
 * New output of a running tool call (a delta: append it to what came before).
 */
export interface ToolExecutionUpdate {
  type: 'tool_execution_update';
  toolCallId: string;
  output: string;
}
/**
 * A tool call finished. ``result`` is what the model sees; ``details`` is for UIs.
 */
export interface ToolExecutionEnd {
  type: 'tool_execution_end';
  toolCallId: string;
  name: string;
  result: (TextContent | ImageContent)[];
  isError?: boolean;
  details?: ToolDetails | null;
}
/**
 * A ``task`` call started a subagent, a child session whose events follow under its id.
 *
 * ``child_session_id`` runs profile ``agent`` for the call ``tool_call_id``. Its own events
 * come as ``session/event`` notifications under its id (to this session's subscribers too),
 * so a client can nest them under the call; the call's ``tool_execution_end`` has the
 * child's final text, and ``details`` its id, usage and cost.
 */
export interface SubagentStart {
  type: 'subagent_start';
  toolCallId: string;
  childSessionId: string;
  agent: string;
  description?: string;
}
/**
 * Turn ``turn`` ended with the assistant message's stop reason.
 */
export interface TurnEnd {
  type: 'turn_end';
  turn: number;
  stopReason: 'aborted' | 'error' | 'length' | 'stop' | 'tool_use';
}
/**
 * A problem with the session file: found while loading it (torn or corrupt line,
 * repair), or a failed write (``disk full: …``).
 */
export interface SessionWarning {
  type: 'session_warning';
  message: string;
  line?: number | null;
}
/**
 * ``session/rewind`` took the session back to before the prompt ``prompt``: the
 * conversation now ends at ``leaf_id`` (None: before the first entry). A client showing
 * the session loads its history again (the earlier events belong to the discarded turns).
 */
export interface SessionRewound {
  type: 'session_rewound';
  leafId: string | null;
  prompt: string;
}
/**
 * The session's model or permission mode changed (``session/setModel``,
 * ``session/setPermissionMode``, from any client): what the session uses from its next
 * model call and tool call on. A client that shows them takes them from here.
 */
export interface SettingsChanged {
  type: 'settings_changed';
  provider: string;
  model: string;
  permissionMode: 'ask' | 'auto' | 'read-only';
}
/**
 * ``session/export``: a self-contained Markdown or HTML document.
 */
export interface SessionExportParams {
  sessionId: string;
  format?: 'html' | 'markdown';
}
/**
 * The exported document.
 */
export interface SessionExportResult {
  format: 'html' | 'markdown';
  content: string;
}
/**
 * ``session/fork``: a new session branching at ``entryId`` (default: the current leaf).
 */
export interface SessionForkParams {
  sessionId: string;
  entryId?: string | null;
  newSessionId?: string | null;
}
/**
 * Params naming one session.
 */
export interface SessionIdParams {
  sessionId: string;
}
/**
 * A session's identity and settings.
 *
 * ``warnings`` are problems with the configuration the session was built from (an ignored
 * project file, settings an untrusted project file may not change). ``untrusted_config`` is
 * the project file whose settings were ignored, or the ``.mcp.json`` whose servers were not
 * started, because its folder is not trusted or it changed since (a client may offer to
 * trust the folder, then create the session again). ``parent_session_id``
 * and ``parent_tool_call_id`` are set on a subagent's session: the session and the
 * ``task`` call that started it.
 */
export interface SessionInfo {
  sessionId: string;
  cwd: string;
  provider: string;
  model: string;
  permissionMode: 'ask' | 'auto' | 'read-only';
  title?: string | null;
  path?: string | null;
  warnings?: string[];
  untrustedConfig?: string | null;
  parentSessionId?: string | null;
  parentToolCallId?: string | null;
}
/**
 * ``session/list``: newest first; ``cursor`` is the previous page's ``nextCursor``.
 */
export interface SessionListParams {
  cwd?: string | null;
  limit?: number;
  cursor?: string | null;
}
/**
 * A page of sessions.
 */
export interface SessionListResult {
  sessions: SessionSummary[];
  nextCursor?: string | null;
}
/**
 * One session as listed (``list_sessions``): computed from the file without parsing it.
 *
 * ``updated_at`` is the file's modification time; ``entry_count`` counts entry lines.
 * ``loaded`` and ``running`` describe the listing daemon: the session is loaded in it, and
 * a run is in progress (both omitted when false). ``parent_session`` and
 * ``parent_entry_id``: a fork, of that session at that entry. ``parent_session_id`` and
 * ``parent_tool_call_id``: a subagent's session, started by that ``task`` call of that
 * session (see :class:`SessionHeader`).
 */
export interface SessionSummary {
  sessionId: string;
  cwd: string;
  createdAt: string;
  updatedAt: string;
  entryCount: number;
  path: string;
  title?: string | null;
  parentSession?: string | null;
  parentEntryId?: string | null;
  parentSessionId?: string | null;
  parentToolCallId?: string | null;
  loaded?: boolean;
  running?: boolean;
}
/**
 * ``session/load``: by id or file path; ``replay`` streams the history as events first.
 *
 * ``providerEnv`` (as for ``session/new``) applies when this call loads the session; a session
 * already loaded keeps the environment it was loaded with. ``mcpServers`` (as for
 * ``session/new``) are added to the session's servers, by name, from its next run on.
 */
export interface SessionLoadParams {
  sessionId?: string | null;
  path?: string | null;
  replay?: boolean;
  providerEnv?: {
    [k: string]: string;
  } | null;
  mcpServers?: McpServerParam[] | null;
}
/**
 * The loaded session, where its event stream stands, and load warnings.
 */
export interface SessionLoadResult {
  session: SessionInfo;
  lastSeq: number;
  messageCount: number;
  warnings?: string[];
}
/**
 * ``session/new``: open a session. Events go to the creating connection.
 *
 * Unset fields come from the configuration. ``sandbox: "workspace"`` confines the file
 * tools to ``cwd`` (opened beneath it, race-free) and, where the kernel has Landlock, what
 * bash writes (``daemon/status`` says; else a ``session_warning``). The effective permission mode
 * and sandbox and the given overrides are stored in the session file, so the session keeps
 * them when it is loaded again.
 *
 * ``providerEnv``: the client's provider variables (``LLM_*``, ``OPENAI_*``, ``ANTHROPIC_*``,
 * ``*_API_KEY``; others are ignored). When given, they replace the daemon's own provider
 * variables for this session; they are held in memory only, never written, and never reach
 * bash. Refused over TCP.
 *
 * ``mcpServers``: MCP servers for this session only, in the ACP shape (merged by name over
 * the configured ones; see docs/mcp.md). Held in memory only.
 */
export interface SessionNewParams {
  cwd: string;
  provider?: string | null;
  model?: string | null;
  systemPrompt?: string | null;
  tools?: string[] | null;
  permissionMode?: ('ask' | 'auto' | 'read-only') | null;
  sessionId?: string | null;
  title?: string | null;
  maxTurns?: number | null;
  baseUrl?: string | null;
  sandbox?: ('none' | 'workspace') | null;
  providerEnv?: {
    [k: string]: string;
  } | null;
  mcpServers?: McpServerParam[] | null;
}
/**
 * ``session/note``: record ``text`` in an idle session as a user message, without a run.
 *
 * For what the user did outside the agent (a shell command and its output): it is kept in
 * the session file, sent to subscribers as ``message_start``/``message_end`` events, and read
 * by the model with the next prompt. Refused with -32002 while a run is in progress.
 */
export interface SessionNoteParams {
  sessionId: string;
  text: string;
}
/**
 * ``session/rename``.
 */
export interface SessionRenameParams {
  sessionId: string;
  title: string;
}
/**
 * ``session/rewind``: go back to before the ``turns``-th last user prompt on the current
 * branch (default 1), or to before the user message ``entryId``. ``files``: also restore
 * the files the discarded runs changed; ``force``: restore files changed outside agentd
 * since (otherwise left alone and listed as conflicts); ``dryRun``: change nothing, answer
 * what the rewind would do (for a confirmation).
 *
 * A rewind that meets a conflict (a file it would leave alone) moves nothing, neither the
 * conversation nor any file, unless ``force``: the result lists the conflicts with
 * ``applied`` false, and the same call with ``force`` (or ``entryId`` the result's
 * ``entryId``) applies it to the same prompt.
 */
export interface SessionRewindParams {
  sessionId: string;
  turns?: number | null;
  entryId?: string | null;
  files?: boolean;
  force?: boolean;
  dryRun?: boolean;
}
/**
 * What ``session/rewind`` did: the new leaf (``leafId``, None: before the first entry),
 * the user message it went back before (``entryId``) and its text (``prompt``: a client
 * may offer it for editing), and the files ``restored`` (rewritten), ``removed`` (created
 * by the discarded runs) and left alone (``conflicts``). Paths are absolute.
 *
 * ``applied``: the session and the files moved. False for a dry run, and when the rewind
 * met conflicts without ``force``: then nothing moved, ``leafId``, ``restored`` and
 * ``removed`` say what the rewind would do, and ``conflicts`` what stopped it.
 */
export interface SessionRewindResult {
  leafId: string | null;
  entryId: string;
  prompt: string;
  applied: boolean;
  restored: string[];
  removed: string[];
  conflicts: RewindConflict[];
}
/**
 * ``session/skills``: the skills of the session ``sessionId``, or (``cwd`` instead) those
 * a new session in ``cwd`` would have. Exactly one of the two.
 */
export interface SessionSkillsParams {
  sessionId?: string | null;
  cwd?: string | null;
}
/**
 * ``session/skills``: the skills by name, found again on every call; ``warnings``: the
 * ones skipped and why (bad front matter, an untrusted project, a name clash).
 */
export interface SessionSkillsResult {
  skills: SkillInfo[];
  warnings?: string[];
}
/**
 * One skill a session can load: its ``name`` and ``description`` (what the model sees),
 * the folder holding its ``SKILL.md`` (``path``), where it was found (``source``), and the
 * tools it narrows a run to while it is followed (``allowed_tools``; None: no narrowing).
 */
export interface SkillInfo {
  name: string;
  description: string;
  path: string;
  source: 'project' | 'user';
  allowedTools?: string[] | null;
}
/**
 * ``session/state``.
 */
export interface SessionStateResult {
  sessionId: string;
  status: 'idle' | 'running';
  phase: 'cancelling' | 'compacting' | 'idle' | 'rewinding' | 'running' | 'starting';
  provider: string;
  model: string;
  permissionMode: 'ask' | 'auto' | 'read-only';
  steering: string[];
  followUp: string[];
  usage: Usage;
  messageCount: number;
  title?: string | null;
  plan?: PlanItem[];
  processes?: ProcessInfo[];
}
/**
 * ``session/steer`` / ``session/followUp``: queue a message for a running session.
 */
export interface SessionTextParams {
  sessionId: string;
  text: string;
}
/**
 * ``session/setModel``: switch provider and/or model for the next LLM call.
 *
 * ``providerEnv`` (as for ``session/new``) replaces the session's provider environment.
 */
export interface SetModelParams {
  sessionId: string;
  model: string;
  provider?: string | null;
  providerEnv?: {
    [k: string]: string;
  } | null;
}
/**
 * ``session/setPermissionMode``: the mode for the next tool calls (kept in the file).
 */
export interface SetPermissionModeParams {
  sessionId: string;
  mode: 'ask' | 'auto' | 'read-only';
}
/**
 * ``skills/check``: check the skill folder (or its ``SKILL.md``) at ``path``.
 */
export interface SkillCheckParams {
  path: string;
}
/**
 * ``skills/check``: ``problems`` found (empty: the skill is usable), and the skill as a
 * session would list it when its front matter is valid.
 */
export interface SkillCheckResult {
  problems: string[];
  skill?: SkillInfo | null;
}
/**
 * ``session/subscribe``: watch a session; replay buffered events after ``sinceSeq``.
 */
export interface SubscribeParams {
  sessionId: string;
  sinceSeq?: number | null;
}
/**
 * ``complete`` is false when the buffer no longer reaches back: resync from messages.
 */
export interface SubscribeResult {
  replayed: number;
  complete: boolean;
  lastSeq: number;
}
/**
 * ``daemon/web``: start the daemon's web chat (``agentd serve --http``) unless it runs,
 * and get a link to it.
 *
 * ``host``/``port`` apply only when it is not running yet (default 127.0.0.1:8765; when that
 * default port is taken, any free port). ``cwd``: where the page starts new sessions.
 */
export interface WebOpenParams {
  cwd?: string | null;
  host?: string;
  port?: number | null;
}
/**
 * The page's URL, carrying a new one-time token (exchanged for a cookie on first use).
 */
export interface WebOpenResult {
  url: string;
  host: string;
  port: number;
}
/**
 * ``fs/writeTextFile`` (server → client): replace the text of ``path`` (absolute),
 * creating the file if needed.
 */
export interface WriteTextFileParams {
  sessionId: string;
  path: string;
  content: string;
}
/**
 * The client's answer to ``fs/writeTextFile`` (``{}`` and ``{"ok": true}`` also mean
 * written). ``written: false``: the client did not take the write (an editor that edits only
 * the files it has open, say); the daemon writes the disk itself.
 */
export interface WriteTextFileResult {
  ok?: boolean;
  written?: boolean;
}

/** Methods called by clients on the daemon. */
export interface ClientMethods {
  /** Handshake: the first call of every connection. */
  'initialize': { params: InitializeParams; result: InitializeResult };
  /** Answer, then stop the daemon gracefully. */
  'shutdown': { params: Empty; result: OkResult };
  /** Version, pid, uptime, connections, loaded sessions. */
  'daemon/status': { params: Empty; result: DaemonStatusResult };
  /** Sessions loaded, runs active, queue depth, loop lag, bytes out, errors, tokens, cost. */
  'daemon/metrics': { params: Empty; result: DaemonMetricsResult };
  /** Start the web chat (HTTP front-end) unless it runs; a one-time link to the page. */
  'daemon/web': { params: WebOpenParams; result: WebOpenResult };
  /** Open a new session (file header written at once). */
  'session/new': { params: SessionNewParams; result: SessionInfo };
  /** Run the agent on a prompt; answers when the run ends. */
  'session/prompt': { params: PromptParams; result: PromptResult };
  /** Queue a message for after the current tool calls (-32002 when the queue is full). */
  'session/steer': { params: SessionTextParams; result: OkResult };
  /** Queue a message for when the agent would stop (-32002 when the queue is full). */
  'session/followUp': { params: SessionTextParams; result: OkResult };
  /** Record a user message in an idle session without a run. */
  'session/note': { params: SessionNoteParams; result: OkResult };
  /** Stop the run; drop queued messages. */
  'session/cancel': { params: SessionIdParams; result: CancelResult };
  /** Idle or running, model, queues, usage. */
  'session/state': { params: SessionIdParams; result: SessionStateResult };
  /** The background processes of a session (or of every loaded one). */
  'session/processes': { params: ProcessesParams; result: ProcessesResult };
  /** End a background process of a session (TERM, then KILL). */
  'session/killProcess': { params: KillProcessParams; result: ProcessInfo };
  /** The conversation on the current branch, a page at a time (newest first). */
  'session/messages': { params: MessagesParams; result: MessagesResult };
  /** Switch provider/model from the next LLM call on. */
  'session/setModel': { params: SetModelParams; result: SessionInfo };
  /** Switch the permission mode (auto, ask, read-only) for the next tool calls. */
  'session/setPermissionMode': { params: SetPermissionModeParams; result: SessionInfo };
  /** The custom commands (`/NAME` prompt templates) of a session, or of a new one in `cwd`. */
  'session/commands': { params: SessionCommandsParams; result: SessionCommandsResult };
  /** The Agent Skills a session can load (or a new one in `cwd`), with where each came from. */
  'session/skills': { params: SessionSkillsParams; result: SessionSkillsResult };
  /** Check a skill folder: front matter, the files it names, scripts executable. */
  'skills/check': { params: SkillCheckParams; result: SkillCheckResult };
  /** Configured providers and models (for a project: cwd). */
  'models/list': { params: ModelsListParams; result: ModelsListResult };
  /** MCP servers of a project (cwd) and the running ones: state, tools, source; with check, each configured one connected to and its tools listed. */
  'mcp/list': { params: McpListParams; result: McpListResult };
  /** Sign in to an OAuth-protected HTTP MCP server: the authorization URL to open (the daemon waits on a loopback redirect), or done when none is needed. */
  'mcp/login': { params: McpLoginParams; result: McpLoginResult };
  /** Wait for a login of mcp/login to end: done, with the server's tools. */
  'mcp/loginFinish': { params: McpLoginFinishParams; result: McpLoginResult };
  /** Forget the stored OAuth credentials of an HTTP MCP server. */
  'mcp/logout': { params: McpLogoutParams; result: McpLogoutResult };
  /** Stored sessions, newest first, paged. */
  'session/list': { params: SessionListParams; result: SessionListResult };
  /** Load a stored session; optionally replay its history. */
  'session/load': { params: SessionLoadParams; result: SessionLoadResult };
  /** Copy the path to an entry into a new session. */
  'session/fork': { params: SessionForkParams; result: SessionInfo };
  /** Continue from an earlier entry in the same file. */
  'session/branch': { params: SessionBranchParams; result: OkResult };
  /** Go back to before a user prompt: the conversation and the files its runs changed. */
  'session/rewind': { params: SessionRewindParams; result: SessionRewindResult };
  /** Set the session title. */
  'session/rename': { params: SessionRenameParams; result: OkResult };
  /** Delete the session file and its bash spill files (force: even while running). */
  'session/delete': { params: SessionDeleteParams; result: OkResult };
  /** Unload the session; its file is kept. */
  'session/close': { params: SessionIdParams; result: OkResult };
  /** A self-contained Markdown or HTML document. */
  'session/export': { params: SessionExportParams; result: SessionExportResult };
  /** Receive a session's events, replaying since a seq. */
  'session/subscribe': { params: SubscribeParams; result: SubscribeResult };
  /** Stop receiving a session's events. */
  'session/unsubscribe': { params: SessionIdParams; result: OkResult };
  /** Summarise older messages into a compaction entry. */
  'session/compact': { params: CompactParams; result: CompactResult };
  /** Answer a pending permission request (web API only: JSON-RPC clients answer `session/requestPermission`). */
  'permission/answer': { params: PermissionAnswerParams; result: OkResult };
  /** Answer a pending question (the web page; any client may, the first answer wins). */
  'question/answer': { params: QuestionAnswerParams; result: OkResult };
}

/** Methods called by the daemon on clients. */
export interface ServerMethods {
  /** Ask to approve a tool call. */
  'session/requestPermission': { params: RequestPermissionParams; result: RequestPermissionResult };
  /** Ask the user questions (for clients with the questions capability). */
  'session/askQuestion': { params: AskQuestionParams; result: AskQuestionResult };
  /** Read a file as the client holds it (for clients with the fs capability). */
  'fs/readTextFile': { params: ReadTextFileParams; result: ReadTextFileResult };
  /** Write a file through the client (for clients with the fs capability). */
  'fs/writeTextFile': { params: WriteTextFileParams; result: WriteTextFileResult };
}

/** Notifications sent by the daemon. */
export interface Notifications {
  'session/event': SessionEvent;
}

/** The protocol version this file was generated for. */
export const PROTOCOL_VERSION = 1;

/** JSON-RPC error codes the daemon uses, by name. */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
  Unauthorized: -32001,
  SessionBusy: -32002,
  SessionNotFound: -32003,
  NotInitialized: -32004,
  ConfigError: -32005,
  SessionExists: -32006,
  PeerTimeout: -32007,
  ConnectionLost: -32008,
  SessionIdle: -32009,
  SessionLocked: -32010,
  StoreWriteFailed: -32011,
  StoreReadFailed: -32012,
} as const;
