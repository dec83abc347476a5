// @ts-check
// Reading a finished tool call's `details` (the typed `ToolDetails` of protocol.d.ts, generated
// from the daemon's wire types): each helper narrows on `type`, so a field is only read from
// the details that have it.

/**
 * @typedef {import('./protocol').ToolDetails} ToolDetails
 * @typedef {import('./protocol').WriteDetails | import('./protocol').EditDetails
 *   | import('./protocol').UndoEditDetails} FileChangeDetails
 */

/**
 * The details of a call that changed a file (write, edit, undo_edit), else null.
 * @param {ToolDetails | null | undefined} details
 * @returns {FileChangeDetails | null}
 */
export function fileChange(details) {
  switch (details?.type) {
    case 'write':
    case 'edit':
    case 'undo_edit':
      return details;
    default:
      return null;
  }
}

/**
 * The unified diff a call made (empty when it made none or it was not diffed); a notebook
 * edit's is the diff of the cell's source (`--- a/nb.ipynb#cell2`).
 * @param {ToolDetails | null | undefined} details
 * @returns {string}
 */
export function changeDiff(details) {
  if (details?.type === 'notebook_edit') return details.diff;
  return fileChange(details)?.diff ?? '';
}

/**
 * A bash command's exit code; null for other tools and for a command a signal or the timeout
 * ended.
 * @param {ToolDetails | null | undefined} details
 * @returns {number | null}
 */
export function exitCode(details) {
  return details?.type === 'bash' ? details.exitCode : null;
}

/**
 * The details of a task (a subagent's run), else null.
 * @param {ToolDetails | null | undefined} details
 * @returns {import('./protocol').TaskDetails | null}
 */
export function subagent(details) {
  return details?.type === 'task' ? details : null;
}

/**
 * The MCP server and tool of a call named `mcp__<server>__<tool>` (from its `mcp` details once
 * it finished, else from the name: the server is what comes before the first `__` after the
 * prefix); null for any other tool.
 * @param {string} name
 * @param {ToolDetails | null | undefined} details
 * @returns {{ server: string, tool: string } | null}
 */
export function mcpTool(name, details) {
  if (details?.type === 'mcp') return { server: details.server, tool: details.tool };
  const found = /^mcp__(.+?)__(.+)$/.exec(name);
  return found ? { server: found[1], tool: found[2] } : null;
}

/**
 * The questions a finished call asked the user, settled, as its card shows them live: the
 * `ask_user` questions, or the last round an MCP server asked (`elicited`); null when it
 * asked none. A round kept without its id gets `<toolCallId>.<n>`, as the daemon's replay
 * names it.
 * @param {string} toolCallId
 * @param {ToolDetails | null | undefined} details
 * @returns {{questionId: string, questions: any[], pending: false, answers: any[] | null,
 *   reason?: string, url: string | null, server: string | null} | null}
 */
export function askedIn(toolCallId, details) {
  const rounds = details?.type === 'ask_user' ? [details] : details?.type === 'mcp' ? details.elicited ?? [] : [];
  const last = rounds[rounds.length - 1];
  if (!last) return null;
  return {
    questionId: last.questionId ?? `${toolCallId}.${rounds.length}`,
    questions: last.questions,
    pending: false,
    answers: last.answers ?? null,
    reason: last.reason ?? undefined,
    url: 'url' in last ? last.url ?? null : null,
    server: details?.type === 'mcp' ? details.server : null,
  };
}
