// @ts-check
// The problems a change introduced: `details.diagnostics` of a write, edit, undo_edit or an
// `lsp` rename (only what the change broke, as the language server reported it after it),
// listed under the card's diff.

/** @typedef {import('./protocol').LspDiagnostic} LspDiagnostic */

const SEVERITY_MARK = { error: '✗', warning: '⚠', information: 'ℹ', hint: '·' };

/**
 * The problems a finished change introduced, else an empty list (an `lsp diagnostics` call
 * lists a file's problems as its answer, not as something a change broke).
 * @param {import('./protocol').ToolDetails | null | undefined} details
 * @returns {LspDiagnostic[]}
 */
export function changeProblems(details) {
  switch (details?.type) {
    case 'write':
    case 'edit':
    case 'undo_edit':
      return details.diagnostics ?? [];
    case 'lsp':
      return details.operation === 'rename' ? details.diagnostics ?? [] : [];
    default:
      return [];
  }
}

/**
 * One problem as a line: `✗ app.py:3:7 undefined name 'x' (pyflakes)`.
 * @param {LspDiagnostic} problem
 */
export function problemText(problem) {
  const name = problem.path.split('/').pop() || problem.path;
  const origin = problem.source ?? problem.server;
  const code = problem.code ? ` [${problem.code}]` : '';
  return `${name}:${problem.line}:${problem.column} ${problem.message}${code}${origin ? ` (${origin})` : ''}`;
}

/**
 * Fill `box` (a `<ul>`) with `problems`, hidden when there are none; unchanged problems leave
 * the DOM alone.
 * @param {HTMLElement} box @param {LspDiagnostic[]} problems
 */
export function updateProblems(box, problems) {
  box.hidden = !problems.length;
  const key = JSON.stringify(problems);
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  const doc = box.ownerDocument;
  const heading = doc.createElement('li');
  heading.className = 'tool-problems-head';
  heading.textContent = `${problems.length} new problem${problems.length === 1 ? '' : 's'} the language server reports`;
  const rows = problems.map((problem) => {
    const row = doc.createElement('li');
    row.className = `tool-problem tool-problem--${problem.severity}`;
    row.title = problem.path;
    const mark = doc.createElement('span');
    mark.className = 'tool-problem-mark';
    mark.textContent = SEVERITY_MARK[problem.severity];
    mark.setAttribute('aria-label', problem.severity);
    row.append(mark, doc.createTextNode(` ${problemText(problem)}`));
    return row;
  });
  box.replaceChildren(...(problems.length ? [heading, ...rows] : []));
}
