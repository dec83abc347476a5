// @ts-check
// Long texts in the log (a pasted 5 MB prompt): shown cut to their head with a "Show more"
// button saying how much is hidden; "Show less" folds them again. Laying out megabytes of
// text costs the page seconds, so the whole text is put in the DOM only on request.

/** Texts longer than this, or with more lines than COLLAPSE_LINES, are folded. */
export const COLLAPSE_CHARS = 2_000;
export const COLLAPSE_LINES = 20;

/**
 * Where `text` is cut when folded: after COLLAPSE_LINES lines or COLLAPSE_CHARS characters,
 * whichever comes first; `text.length` when it is short enough to show whole.
 * @param {string} text
 * @returns {number}
 */
export function foldAt(text) {
  let at = -1;
  for (let line = 0; line < COLLAPSE_LINES; line += 1) {
    at = text.indexOf('\n', at + 1);
    if (at === -1 || at >= COLLAPSE_CHARS) break;
  }
  const byLines = at === -1 ? text.length : at;
  const cut = Math.min(byLines, COLLAPSE_CHARS);
  return cut >= text.length - 1 ? text.length : cut;
}

/** "1.2 MB", "34 KB", "812 characters": the size of what is hidden. */
export function sizeLabel(chars) {
  if (chars >= 1_000_000) return `${(chars / 1_000_000).toFixed(1)} MB`;
  if (chars >= 10_000) return `${Math.round(chars / 1000)} KB`;
  return `${chars} characters`;
}

/**
 * Show `text` in `box` (its text node and, for a long text, a toggle after it). `box` keeps
 * whether it is expanded across calls with the same text.
 * @param {HTMLElement} box
 * @param {string} text
 */
export function showFoldable(box, text) {
  const cut = foldAt(text);
  if (cut === text.length) {
    box.textContent = text;
    return;
  }
  const doc = box.ownerDocument;
  const body = doc.createElement('span');
  body.className = 'fold-text';
  const toggle = doc.createElement('button');
  toggle.type = 'button';
  toggle.className = 'btn fold-toggle';
  const hiddenLines = countLines(text, cut);
  const render = () => {
    const open = box.dataset.expanded === 'true';
    body.textContent = open ? text : `${text.slice(0, cut)}…`;
    toggle.textContent = open ? 'Show less' : `Show more (${sizeLabel(text.length - cut)}, ${hiddenLines.toLocaleString('en')} more line${hiddenLines === 1 ? '' : 's'})`;
    toggle.setAttribute('aria-expanded', String(open));
  };
  toggle.addEventListener('click', () => {
    box.dataset.expanded = String(box.dataset.expanded !== 'true');
    render();
  });
  render();
  box.replaceChildren(body, doc.createElement('br'), toggle);
}

/** Lines of `text` after position `from` (a newline there ends the shown part), counted
 * without splitting a multi-megabyte string. */
export function countLines(text, from) {
  const start = text[from] === '\n' ? from + 1 : from;
  let count = 0;
  for (let at = text.indexOf('\n', start); at !== -1; at = text.indexOf('\n', at + 1)) count += 1;
  return text.endsWith('\n') || start >= text.length ? count : count + 1;
}
