// @ts-check
// Cutting a code block into runs of lines, so that only the runs near the screen need their
// highlighted markup in the DOM (see code.js). Pure functions; used by the page and by the
// highlighting worker.

/** Lines per run. */
export const RUN_LINES = 100;

/**
 * `text` cut after every `per`-th newline (each run keeps its newlines; the last run is what
 * follows the last cut, left out when empty unless it is the only one).
 * @param {string} text
 * @param {number} [per]
 * @returns {string[]}
 */
export function splitText(text, per = RUN_LINES) {
  const runs = [];
  let start = 0;
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    lines += 1;
    if (lines === per) {
      runs.push(text.slice(start, at + 1));
      start = at + 1;
      lines = 0;
    }
  }
  if (start < text.length || runs.length === 0) runs.push(text.slice(start));
  return runs;
}

const TOKEN = /<span class="[^"]*">|<\/span>|\n/g;

/**
 * highlight.js's `html` cut like `splitText` cuts its text: each run's spans are closed at its
 * end and the ones still open are opened again at the start of the next, so every run is
 * well-formed markup showing exactly the text of the same run of `splitText`.
 * @param {string} html
 * @param {number} [per]
 * @returns {string[]}
 */
export function splitHighlighted(html, per = RUN_LINES) {
  const runs = [];
  /** @type {string[]} */
  const open = [];
  let current = '';
  let lines = 0;
  let last = 0;
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(html); match; match = TOKEN.exec(html)) {
    current += html.slice(last, match.index);
    last = TOKEN.lastIndex;
    const token = match[0];
    if (token === '\n') {
      current += token;
      lines += 1;
      if (lines === per) {
        runs.push(current + '</span>'.repeat(open.length));
        current = open.join('');
        lines = 0;
      }
    } else {
      if (token === '</span>') open.pop();
      else open.push(token);
      current += token;
    }
  }
  const rest = current + html.slice(last);
  if (runs.length === 0 || rest.replace(/<[^>]*>/g, '') !== '') runs.push(rest);
  return runs;
}
